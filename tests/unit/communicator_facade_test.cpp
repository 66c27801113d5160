// The C++ façade of communicators against the fake driver (2 devices) and the
// fake NCCL installed in-process (fake_nccl.hpp, which computes collectives on
// the host): ids, both ways of creating, every collective with its values read
// back, the typed overloads, groups (end, the quiet end of the destructor,
// nesting), errors as cucore::Error, NCCL absent, and device peer access.
#include <cstdint>
#include <cstring>
#include <vector>

#include "driver/nccl.hpp"
#include "fake_nccl.hpp"
#include "memory_facade_support.hpp"

namespace {

class CommunicatorFacadeTest : public MemoryFacadeFixture {
  protected:
    void SetUp() override {
        MemoryFacadeFixture::SetUp();
        fake::nccl::install();
        s1_ = dev1_.create_stream();
        comms_ = cucore::Communicator::create_all({dev_, dev1_});
    }
    void TearDown() override {
        comms_.clear();
        s1_.reset();
        EXPECT_EQ(cucore::Group::depth(), 0) << "a test left a group open";
        EXPECT_EQ(fake::nccl::faults(), 0) << fake::nccl::last_fault();
        // Operations hold their communicators until their streams pass them, then the library's
        // release thread lets go: counting live objects drains what it has been handed.
        (void)live(CUCORE_OBJECT_ANY);
        EXPECT_EQ(fake::nccl::live_comms(), 0) << "communicators leaked";
        fake::nccl::uninstall();
        MemoryFacadeFixture::TearDown();
    }
    const cucore::Stream &stream(int rank) const { return rank == 0 ? s_ : s1_; }
    const cucore::Device &dev(int rank) const { return rank == 0 ? dev_ : dev1_; }
    // A buffer of `rank`'s device holding `values`.
    template <typename T>
    cucore::Buffer buffer(int rank, const std::vector<T> &values) {
        cucore::Buffer b = dev(rank).allocate(values.size() * sizeof(T), stream(rank));
        b.copy_from_host(values, stream(rank));
        return b;
    }
    template <typename T>
    cucore::Buffer zeros(int rank, std::size_t count) {
        return buffer(rank, std::vector<T>(count, T{}));
    }
    template <typename T>
    std::vector<T> values(int rank, const cucore::Buffer &b) {
        std::vector<T> out(static_cast<std::size_t>(b.size() / sizeof(T)));
        b.copy_to_host(out, stream(rank));
        stream(rank).synchronize();
        return out;
    }

    cucore::Stream s1_;
    std::vector<cucore::Communicator> comms_;
};

TEST_F(CommunicatorFacadeTest, IdsAndWhatACommunicatorSays) {
    const cucore::CommunicatorId id = cucore::CommunicatorId::create();
    EXPECT_NE(id, cucore::CommunicatorId()) << "a made id is not all zeros";
    EXPECT_EQ(cucore::CommunicatorId::from_bytes(id.bytes()), id);
    EXPECT_EQ(cucore::CommunicatorId::from_bytes(id.data(), cucore::CommunicatorId::size), id);
    EXPECT_EQ(cucore::CommunicatorId::from_c(id.to_c()), id);
    EXPECT_NE(cucore::CommunicatorId::create(), id) << "each id names a new clique";
    EXPECT_THROWS_STATUS(cucore::CommunicatorId::from_bytes(id.data(), 127), CUCORE_ERROR_INVALID_ARGUMENT);

    ASSERT_EQ(comms_.size(), 2u);
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(comms_[r].rank(), r);
        EXPECT_EQ(comms_[r].rank_count(), 2);
        EXPECT_EQ(comms_[r].device(), dev(r));
        EXPECT_NE(comms_[r].handle(), nullptr);
        EXPECT_NO_THROW(comms_[r].check());
    }
    EXPECT_EQ(fake::nccl::clique_of(static_cast<cucore::driver::nccl::Comm>(comms_[0].handle())),
              fake::nccl::clique_of(static_cast<cucore::driver::nccl::Comm>(comms_[1].handle())));
    EXPECT_EQ(cucore::communicator_library_version(), fake::nccl::kDefaultVersion);
    EXPECT_EQ(cucore::data_type_size(cucore::DataType::bfloat16), 2u);
    EXPECT_EQ(cucore::data_type_size(cucore::DataType::float64), 8u);
    EXPECT_EQ(cucore::data_type_size(cucore::DataType::float8_e5m2), 1u);
    static_assert(cucore::data_type_of<std::uint64_t> == cucore::DataType::uint64);
    static_assert(cucore::data_type_of<cucore::float16> == cucore::DataType::float16);

    // One thread joining both ranks of a clique by id, in a group.
    std::vector<cucore::Communicator> joined(2);
    {
        cucore::Group group;
        EXPECT_EQ(cucore::Group::depth(), 1);
        for (int r = 0; r < 2; ++r) joined[r] = cucore::Communicator::create(dev(r), id, 2, r);
        group.end();
        EXPECT_FALSE(group.is_open());
    }
    EXPECT_EQ(joined[1].rank(), 1);
    EXPECT_EQ(joined[0].device(), dev_);
    EXPECT_NE(joined[0], comms_[0]);
    const cucore::Communicator copy = joined[0];  // retain
    EXPECT_EQ(copy, joined[0]);
}

TEST_F(CommunicatorFacadeTest, AllReduceSumsAndTypedOverloadsNameTheirType) {
    std::vector<cucore::Buffer> send, recv;
    for (int r = 0; r < 2; ++r) {
        send.push_back(buffer<float>(r, {1.0f + r, 2.0f + r, 3.0f + r, 4.0f + r}));
        recv.push_back(zeros<float>(r, 4));
    }
    {
        cucore::Group group;
        for (int r = 0; r < 2; ++r) comms_[r].all_reduce<float>(send[r], recv[r], stream(r));
        group.end();
    }
    for (int r = 0; r < 2; ++r) EXPECT_EQ(values<float>(r, recv[r]), (std::vector<float>{3, 5, 7, 9}));

    // The DataType overload, max, in place, an explicit count of 2 (the rest untouched).
    std::vector<cucore::Buffer> ints{buffer<std::int32_t>(0, {5, -1, 7}), buffer<std::int32_t>(1, {2, 8, 100})};
    {
        cucore::Group group;
        for (int r = 0; r < 2; ++r)
            comms_[r].all_reduce(ints[r], ints[r], cucore::DataType::int32, stream(r), cucore::ReduceOp::max, 2);
        group.end();
    }
    EXPECT_EQ(values<std::int32_t>(0, ints[0]), (std::vector<std::int32_t>{5, 8, 7}));
    EXPECT_EQ(values<std::int32_t>(1, ints[1]), (std::vector<std::int32_t>{5, 8, 100}));

    // Outside a group, as one thread per rank would call (the fake never blocks: it computes when
    // the last rank's call posts); min over uint64.
    std::vector<cucore::Buffer> u{buffer<std::uint64_t>(0, {3, 40}), buffer<std::uint64_t>(1, {30, 4})};
    for (int r = 0; r < 2; ++r) comms_[r].all_reduce<std::uint64_t>(u[r], u[r], stream(r), cucore::ReduceOp::min);
    for (int r = 0; r < 2; ++r) EXPECT_EQ(values<std::uint64_t>(r, u[r]), (std::vector<std::uint64_t>{3, 4}));
}

TEST_F(CommunicatorFacadeTest, GatherScatterBroadcastReduce) {
    // all_gather: rank order, count 0 = all of send.
    std::vector<cucore::Buffer> send{buffer<double>(0, {1.5, 2.5}), buffer<double>(1, {-3, 4})};
    std::vector<cucore::Buffer> gathered{zeros<double>(0, 4), zeros<double>(1, 4)};
    {
        cucore::Group group;
        for (int r = 0; r < 2; ++r) comms_[r].all_gather<double>(send[r], gathered[r], stream(r));
    }  // the destructor ends the group
    for (int r = 0; r < 2; ++r) EXPECT_EQ(values<double>(r, gathered[r]), (std::vector<double>{1.5, 2.5, -3, 4}));

    // reduce_scatter: block r of the sum on rank r.
    std::vector<cucore::Buffer> in{buffer<std::uint32_t>(0, {1, 2, 3, 4}), buffer<std::uint32_t>(1, {10, 20, 30, 40})};
    std::vector<cucore::Buffer> block{zeros<std::uint32_t>(0, 2), zeros<std::uint32_t>(1, 2)};
    {
        cucore::Group group;
        for (int r = 0; r < 2; ++r) comms_[r].reduce_scatter<std::uint32_t>(in[r], block[r], stream(r));
        group.end();
    }
    EXPECT_EQ(values<std::uint32_t>(0, block[0]), (std::vector<std::uint32_t>{11, 22}));
    EXPECT_EQ(values<std::uint32_t>(1, block[1]), (std::vector<std::uint32_t>{33, 44}));

    // broadcast from rank 1; rank 0 passes no send buffer.
    const cucore::Buffer root_data = buffer<std::int64_t>(1, {7, -8, 9});
    std::vector<cucore::Buffer> out{zeros<std::int64_t>(0, 3), zeros<std::int64_t>(1, 3)};
    {
        cucore::Group group;
        comms_[0].broadcast(cucore::Buffer(), out[0], cucore::DataType::int64, 1, stream(0));
        comms_[1].broadcast<std::int64_t>(root_data, out[1], 1, stream(1));
        group.end();
    }
    for (int r = 0; r < 2; ++r) EXPECT_EQ(values<std::int64_t>(r, out[r]), (std::vector<std::int64_t>{7, -8, 9}));

    // reduce (product) to rank 0; rank 1 passes no receive buffer.
    std::vector<cucore::Buffer> factors{buffer<float>(0, {2, 3}), buffer<float>(1, {4, -5})};
    const cucore::Buffer product = zeros<float>(0, 2);
    {
        cucore::Group group;
        comms_[0].reduce<float>(factors[0], product, 0, stream(0), cucore::ReduceOp::prod);
        comms_[1].reduce(factors[1], cucore::Buffer(), cucore::DataType::float32, 0, stream(1), cucore::ReduceOp::prod);
        group.end();
    }
    EXPECT_EQ(values<float>(0, product), (std::vector<float>{8, -15}));
}

TEST_F(CommunicatorFacadeTest, SendAndReceiveInAGroup) {
    const cucore::Buffer from0 = buffer<std::uint8_t>(0, {1, 2, 3, 4});
    const cucore::Buffer from1 = buffer<std::uint8_t>(1, {9, 8, 7, 6});
    const cucore::Buffer at0 = zeros<std::uint8_t>(0, 4);
    const cucore::Buffer at1 = zeros<std::uint8_t>(1, 4);
    {
        cucore::Group group;
        comms_[0].send<std::uint8_t>(from0, 1, stream(0));
        comms_[1].recv<std::uint8_t>(at1, 0, stream(1));
        comms_[1].send(from1, cucore::DataType::uint8, 0, stream(1), 2);  // the first 2 only
        comms_[0].recv(at0, cucore::DataType::uint8, 1, stream(0), 2);
        group.end();
    }
    EXPECT_EQ(values<std::uint8_t>(1, at1), (std::vector<std::uint8_t>{1, 2, 3, 4}));
    EXPECT_EQ(values<std::uint8_t>(0, at0), (std::vector<std::uint8_t>{9, 8, 0, 0}));
}

TEST_F(CommunicatorFacadeTest, GroupsNestAndEndOnce) {
    {
        cucore::Group outer;
        {
            cucore::Group inner;
            EXPECT_EQ(cucore::Group::depth(), 2);
            inner.end();
            EXPECT_THROWS_STATUS(inner.end(), CUCORE_ERROR_INVALID_STATE);
        }
        EXPECT_EQ(cucore::Group::depth(), 1);
        cucore::Group moved(std::move(outer));
        EXPECT_FALSE(outer.is_open());
        EXPECT_TRUE(moved.is_open());
    }
    EXPECT_EQ(cucore::Group::depth(), 0) << "the moved-to guard ended the group once";

    // NCCL failing at the group end: end() throws it; the destructor reports it quietly.
    fake::nccl::fail_entry("ncclGroupEnd");
    {
        cucore::Group group;
        EXPECT_THROWS_STATUS(group.end(), CUCORE_ERROR_CUDA);
    }
    expects_release_errors_ = true;
    const std::uint64_t before = cucore::release_error_count();
    { cucore::Group group; }
    EXPECT_EQ(cucore::release_error_count(), before + 1) << "the destructor's failed end is reported";
    fake::nccl::fail_entry("");
    EXPECT_EQ(cucore::Group::depth(), 0);
    // The fake's injected failures change nothing, so it still counts the two groups open on this
    // thread (NCCL closes a group whose end fails); closing them keeps later tests' operations
    // from waiting for a group end forever. (Once the fake closes them too, these answer an error.)
    for (int i = 0; i < 2; ++i) (void)fake::nccl::current_table().ncclGroupEnd();
}

TEST_F(CommunicatorFacadeTest, ErrorsThrowTheLibrarysStatus) {
    const cucore::Buffer small = zeros<float>(0, 2);
    const cucore::Buffer large = zeros<float>(0, 4);
    const cucore::Buffer other_device = zeros<float>(1, 2);
    const cucore::Communicator &c = comms_[0];
    // Count 0: sizes must match.
    EXPECT_THROWS_STATUS(c.all_reduce<float>(small, large, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(c.all_reduce<float>(small, small, s_, cucore::ReduceOp::sum, 3),
                         CUCORE_ERROR_INVALID_ARGUMENT);  // a count beyond the buffer
    EXPECT_THROWS_STATUS(c.all_reduce<float>(other_device, other_device, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // A stream of another device.
    EXPECT_THROWS_STATUS(c.all_reduce<float>(small, small, s1_), CUCORE_ERROR_INVALID_ARGUMENT);
    // Recv must be rank_count times send.
    EXPECT_THROWS_STATUS(c.all_gather<float>(small, small, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(c.broadcast<float>(small, small, 2, s_), CUCORE_ERROR_INVALID_ARGUMENT);  // root
    EXPECT_THROWS_STATUS(c.send<float>(small, -1, s_), CUCORE_ERROR_INVALID_ARGUMENT);  // peer
    EXPECT_THROWS_STATUS(cucore::Communicator().rank(), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_THROWS_STATUS(cucore::Communicator().all_reduce<float>(small, small, s_), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_THROWS_STATUS(cucore::Communicator::create(dev_, cucore::CommunicatorId::create(), 2, 2),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::Communicator::create_all({}), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::Communicator::create_all({dev_, dev_}), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(cucore::data_type_size(static_cast<cucore::DataType>(0)), CUCORE_ERROR_INVALID_ARGUMENT);

    // An asynchronous NCCL failure shows in check().
    ASSERT_TRUE(fake::nccl::set_async_error(static_cast<cucore::driver::nccl::Comm>(c.handle()),
                                            cucore::driver::nccl::kRemoteError));
    EXPECT_THROWS_STATUS(c.check(), CUCORE_ERROR_CUDA);
    ASSERT_TRUE(fake::nccl::set_async_error(static_cast<cucore::driver::nccl::Comm>(c.handle()), 0));
    EXPECT_NO_THROW(c.check());
    try {
        fake::nccl::fail_entry("ncclAllReduce", cucore::driver::nccl::kInternalError);
        c.all_reduce<float>(small, small, s_);
        ADD_FAILURE() << "did not throw";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_CUDA);
        EXPECT_NE(std::strstr(e.what(), "ncclAllReduce"), nullptr) << e.what();
    }
    fake::nccl::fail_entry("");

    // NCCL missing: NOT_SUPPORTED from whatever needs it; data_type_size needs none.
    comms_.clear();
    cucore::driver::mark_nccl_absent("");
    EXPECT_THROWS_STATUS(cucore::CommunicatorId::create(), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_THROWS_STATUS(cucore::Group(), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_THROWS_STATUS(cucore::communicator_library_version(), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore::data_type_size(cucore::DataType::int8), 1u);
    // The fake as it was, for TearDown's counts.
    cucore::driver::install_nccl_substitute(&fake::nccl::current_table(), fake::nccl::kDefaultVersion);
}

TEST_F(CommunicatorFacadeTest, DevicePeerAccess) {
    pins_primary_ = true;  // enabling pins both primary contexts for the process
    ASSERT_TRUE(dev_.can_access_peer(dev1_));
    dev_.enable_peer_access(dev1_);
    EXPECT_NO_THROW(dev_.enable_peer_access(dev1_)) << "enabling twice is no error";
    dev1_.enable_peer_access(dev_);
    dev_.disable_peer_access(dev1_);
    EXPECT_THROWS_STATUS(dev_.disable_peer_access(dev1_), CUCORE_ERROR_INVALID_STATE);  // not enabled any more
    dev1_.disable_peer_access(dev_);
    EXPECT_THROWS_STATUS(dev_.enable_peer_access(dev_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(dev_.disable_peer_access(dev_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_THROWS_STATUS(dev_.enable_peer_access(cucore::Device()), CUCORE_ERROR_INVALID_HANDLE);
}

}  // namespace
