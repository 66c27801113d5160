// Communicators (issue 19) against the fake NCCL on the fake driver's two
// devices: every collective on every data type with the results read back,
// counts of 0 and explicit counts, the argument checks and their messages,
// groups, what an operation holds (released handles, graph capture), the
// clique made from an id, ranks on two threads, and the NCCL version checks.
// NCCL failures, NCCL absent and async errors: communicator_fault_injection_test.cpp.
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "communicator_support.hpp"

namespace {

// One element type and how the test writes values of it (its own encoding,
// independent of the fake's; the values used are exact in every type).
struct TypeCase {
    cucore_data_type_t type;
    const char *name;
    size_t size;
    bool integer;
};
const TypeCase kTypes[] = {
    {CUCORE_DATA_TYPE_INT8, "int8", 1, true},          {CUCORE_DATA_TYPE_UINT8, "uint8", 1, true},
    {CUCORE_DATA_TYPE_INT32, "int32", 4, true},        {CUCORE_DATA_TYPE_UINT32, "uint32", 4, true},
    {CUCORE_DATA_TYPE_INT64, "int64", 8, true},        {CUCORE_DATA_TYPE_UINT64, "uint64", 8, true},
    {CUCORE_DATA_TYPE_FLOAT16, "float16", 2, false},   {CUCORE_DATA_TYPE_FLOAT32, "float32", 4, false},
    {CUCORE_DATA_TYPE_FLOAT64, "float64", 8, false},   {CUCORE_DATA_TYPE_BFLOAT16, "bfloat16", 2, false},
    {CUCORE_DATA_TYPE_FLOAT8_E4M3, "float8_e4m3", 1, false}, {CUCORE_DATA_TYPE_FLOAT8_E5M2, "float8_e5m2", 1, false},
};

// A positive value exact in a float of `mantissa` bits and `bias`.
uint64_t small_float(double v, int mantissa, int bias) {
    if (v == 0) return 0;
    const int e = std::ilogb(v);
    const double m = (std::ldexp(v, -e) - 1) * std::ldexp(1.0, mantissa);
    EXPECT_EQ(m, std::floor(m)) << v << " is not exact";
    return (static_cast<uint64_t>(e + bias) << mantissa) | static_cast<uint64_t>(m);
}

std::vector<uint8_t> encode(const TypeCase &t, const std::vector<double> &values) {
    std::vector<uint8_t> out(values.size() * t.size);
    for (size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        uint8_t *p = out.data() + i * t.size;
        auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
        switch (t.type) {
            case CUCORE_DATA_TYPE_INT8: put(static_cast<int8_t>(v)); break;
            case CUCORE_DATA_TYPE_UINT8: put(static_cast<uint8_t>(v)); break;
            case CUCORE_DATA_TYPE_INT32: put(static_cast<int32_t>(v)); break;
            case CUCORE_DATA_TYPE_UINT32: put(static_cast<uint32_t>(v)); break;
            case CUCORE_DATA_TYPE_INT64: put(static_cast<int64_t>(v)); break;
            case CUCORE_DATA_TYPE_UINT64: put(static_cast<uint64_t>(v)); break;
            case CUCORE_DATA_TYPE_FLOAT16: put(static_cast<uint16_t>(small_float(v, 10, 15))); break;
            case CUCORE_DATA_TYPE_FLOAT32: put(static_cast<float>(v)); break;
            case CUCORE_DATA_TYPE_FLOAT64: put(v); break;
            case CUCORE_DATA_TYPE_BFLOAT16: {
                const float f = static_cast<float>(v);
                uint32_t bits;
                std::memcpy(&bits, &f, sizeof bits);
                EXPECT_EQ(bits & 0xFFFFu, 0u) << v << " is not exact";
                put(static_cast<uint16_t>(bits >> 16));
                break;
            }
            case CUCORE_DATA_TYPE_FLOAT8_E4M3: put(static_cast<uint8_t>(small_float(v, 3, 7))); break;
            default: put(static_cast<uint8_t>(small_float(v, 2, 15))); break;
        }
    }
    return out;
}

const std::vector<double> kRank[2] = {{1, 2, 3, 4}, {2, 2, 4, 4}};

std::vector<double> expected_reduction(cucore_reduce_op_t op, bool integer) {
    std::vector<double> out(4);
    for (size_t i = 0; i < 4; ++i) {
        const double a = kRank[0][i], b = kRank[1][i];
        switch (op) {
            case CUCORE_REDUCE_SUM: out[i] = a + b; break;
            case CUCORE_REDUCE_PROD: out[i] = a * b; break;
            case CUCORE_REDUCE_MAX: out[i] = std::max(a, b); break;
            case CUCORE_REDUCE_MIN: out[i] = std::min(a, b); break;
            default: out[i] = integer ? std::trunc((a + b) / 2) : (a + b) / 2; break;
        }
    }
    return out;
}

std::vector<double> concat(const std::vector<double> &a, const std::vector<double> &b) {
    std::vector<double> out = a;
    out.insert(out.end(), b.begin(), b.end());
    return out;
}

class Collectives : public CommunicatorTest {
  protected:
    // Runs `call(rank)` for both ranks inside one group, each expected to succeed.
    void grouped(const std::function<cucore_status_t(int)> &call) {
        ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS) << message();
        for (int r = 0; r < 2; ++r) EXPECT_EQ(call(r), CUCORE_SUCCESS) << "rank " << r << ": " << message();
        ASSERT_EQ(cucore_communicator_group_end(), CUCORE_SUCCESS) << message();
    }
    void expect_bytes(cucore_buffer_t *b, int d, const std::vector<uint8_t> &expected, const std::string &what) {
        EXPECT_EQ(read(b, d), expected) << what;
    }
};

TEST_F(Collectives, EveryCollectiveOnEveryDataTypeComputesTheResult) {
    make_all();
    const cucore_reduce_op_t ops[] = {CUCORE_REDUCE_SUM, CUCORE_REDUCE_PROD, CUCORE_REDUCE_MAX, CUCORE_REDUCE_MIN,
                                      CUCORE_REDUCE_AVG};
    long operations = 0;
    for (const TypeCase &t : kTypes) {
        SCOPED_TRACE(t.name);
        const uint32_t n = 4;
        uint32_t size = 0;
        ASSERT_EQ(cucore_data_type_size(t.type, &size), CUCORE_SUCCESS);
        EXPECT_EQ(size, t.size);
        cucore_buffer_t *send[2], *recv[2];
        for (int r = 0; r < 2; ++r) {
            send[r] = buffer_with(r, encode(t, kRank[r]));
            recv[r] = buffer(r, n * t.size);
        }
        for (cucore_reduce_op_t op : ops) {  // all-reduce, every reduction
            grouped([&](int r) { return cucore_communicator_all_reduce(c_[r], send[r], recv[r], 0, t.type, op, s_[r]); });
            for (int r = 0; r < 2; ++r)
                expect_bytes(recv[r], r, encode(t, expected_reduction(op, t.integer)), "all-reduce op " + std::to_string(op));
        }
        // In place: each rank's send buffer is its receive buffer.
        cucore_buffer_t *in_place[2] = {buffer_with(0, encode(t, kRank[0])), buffer_with(1, encode(t, kRank[1]))};
        grouped([&](int r) {
            return cucore_communicator_all_reduce(c_[r], in_place[r], in_place[r], n, t.type, CUCORE_REDUCE_MAX, s_[r]);
        });
        for (int r = 0; r < 2; ++r)
            expect_bytes(in_place[r], r, encode(t, expected_reduction(CUCORE_REDUCE_MAX, t.integer)), "in place");
        // All-gather: rank order.
        cucore_buffer_t *gathered[2] = {buffer(0, 2 * n * t.size), buffer(1, 2 * n * t.size)};
        grouped([&](int r) { return cucore_communicator_all_gather(c_[r], send[r], gathered[r], 0, t.type, s_[r]); });
        for (int r = 0; r < 2; ++r) expect_bytes(gathered[r], r, encode(t, concat(kRank[0], kRank[1])), "all-gather");
        // Reduce-scatter: block r of the sum to rank r.
        const std::vector<double> scatter_in[2] = {concat(kRank[0], kRank[1]), concat(kRank[1], {1, 1, 1, 1})};
        cucore_buffer_t *scatter_send[2] = {buffer_with(0, encode(t, scatter_in[0])), buffer_with(1, encode(t, scatter_in[1]))};
        grouped([&](int r) {
            return cucore_communicator_reduce_scatter(c_[r], scatter_send[r], recv[r], 0, t.type, CUCORE_REDUCE_SUM, s_[r]);
        });
        expect_bytes(recv[0], 0, encode(t, {3, 4, 7, 8}), "reduce-scatter block 0");
        expect_bytes(recv[1], 1, encode(t, {3, 3, 5, 5}), "reduce-scatter block 1");
        // Broadcast from rank 1 (rank 0 passes no send buffer).
        grouped([&](int r) {
            return cucore_communicator_broadcast(c_[r], r == 1 ? send[r] : nullptr, recv[r], 0, t.type, 1, s_[r]);
        });
        for (int r = 0; r < 2; ++r) expect_bytes(recv[r], r, encode(t, kRank[1]), "broadcast");
        // Reduce to rank 0 (rank 1 passes no receive buffer; rank 1's recv keeps what it had).
        grouped([&](int r) {
            return cucore_communicator_reduce(c_[r], send[r], r == 0 ? recv[r] : nullptr, 0, t.type, CUCORE_REDUCE_SUM, 0,
                                              s_[r]);
        });
        expect_bytes(recv[0], 0, encode(t, {3, 4, 7, 8}), "reduce at the root");
        expect_bytes(recv[1], 1, encode(t, kRank[1]), "reduce leaves other ranks alone");
        // Send and receive both ways.
        grouped([&](int r) {
            const int peer = 1 - r;
            const cucore_status_t sent = cucore_communicator_send(c_[r], send[r], 0, t.type, peer, s_[r]);
            return sent != CUCORE_SUCCESS ? sent : cucore_communicator_recv(c_[r], recv[r], 0, t.type, peer, s_[r]);
        });
        expect_bytes(recv[0], 0, encode(t, kRank[1]), "received from rank 1");
        expect_bytes(recv[1], 1, encode(t, kRank[0]), "received from rank 0");
        operations += 12;  // five all-reduces, in place, gather, scatter, broadcast, reduce, two sends
        for (cucore_buffer_t *b : {send[0], send[1], recv[0], recv[1], in_place[0], in_place[1], gathered[0],
                                   gathered[1], scatter_send[0], scatter_send[1]})
            cucore_buffer_release(b);
    }
    EXPECT_EQ(fake::nccl::completed_operations(), operations);
}

TEST_F(Collectives, ACountOfZeroIsTheWholeBufferAndAnExplicitCountOnlyItsStart) {
    make_all();
    const TypeCase &f32 = kTypes[7];
    cucore_buffer_t *send[2] = {buffer_with(0, encode(f32, kRank[0])), buffer_with(1, encode(f32, kRank[1]))};
    cucore_buffer_t *recv[2] = {buffer_with(0, encode(f32, {9, 9, 9, 9})), buffer_with(1, encode(f32, {9, 9, 9, 9}))};
    grouped([&](int r) {
        return cucore_communicator_all_reduce(c_[r], send[r], recv[r], 2, CUCORE_DATA_TYPE_FLOAT32, CUCORE_REDUCE_SUM, s_[r]);
    });
    for (int r = 0; r < 2; ++r) expect_bytes(recv[r], r, encode(f32, {3, 4, 9, 9}), "two elements reduced, the rest kept");
    grouped([&](int r) {
        return cucore_communicator_all_reduce(c_[r], send[r], recv[r], 0, CUCORE_DATA_TYPE_FLOAT32, CUCORE_REDUCE_SUM, s_[r]);
    });
    for (int r = 0; r < 2; ++r) expect_bytes(recv[r], r, encode(f32, {3, 4, 7, 8}), "count 0: all four");
    // An explicit count may leave the larger buffer partly unused; count 0 needs equal sizes.
    cucore_buffer_t *big = buffer(0, 32), *odd = buffer(0, 6);
    EXPECT_EQ(cucore_communicator_all_reduce(c_[0], send[0], big, 0, CUCORE_DATA_TYPE_FLOAT32, CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("mismatched sizes: 'recv' holds 32 bytes where 'send' (16 bytes) needs 16 bytes"),
              std::string::npos)
        << message();
    EXPECT_EQ(cucore_communicator_all_reduce(c_[0], send[0], big, 5, CUCORE_DATA_TYPE_FLOAT32, CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'send' holds 16 bytes; 5 elements of 4 bytes need more"), std::string::npos) << message();
    EXPECT_EQ(cucore_communicator_all_reduce(c_[0], odd, odd, 0, CUCORE_DATA_TYPE_FLOAT32, CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'send' holds 6 bytes, not a whole number of 4-byte elements"), std::string::npos)
        << message();
    // All-gather's receive buffer is rank_count times the send buffer; reduce-scatter's send buffer likewise.
    EXPECT_EQ(cucore_communicator_all_gather(c_[0], send[0], recv[0], 0, CUCORE_DATA_TYPE_FLOAT32, s_[0]),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'recv' holds 16 bytes where 'send' (16 bytes) needs 32 bytes"), std::string::npos)
        << message();
    EXPECT_EQ(cucore_communicator_reduce_scatter(c_[0], send[0], recv[0], 0, CUCORE_DATA_TYPE_FLOAT32,
                                                 CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'send' holds 16 bytes where 'recv' (16 bytes) needs 32 bytes"), std::string::npos)
        << message();
    for (cucore_buffer_t *b : {send[0], send[1], recv[0], recv[1], big, odd}) cucore_buffer_release(b);
}


TEST_F(Collectives, ArgumentsAreCheckedAndNamedBeforeNcclIsCalled) {
    make_all();
    cucore_buffer_t *mine = buffer(0, 16), *theirs = buffer(1, 16);
    cucore_memory_resource_t *pinned = nullptr;
    ASSERT_EQ(cucore_pinned_memory_resource_get_default(d_[0], &pinned), CUCORE_SUCCESS) << message();
    cucore_buffer_t *host = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(pinned, 16, s_[0], &host), CUCORE_SUCCESS) << message();
    const auto F32 = CUCORE_DATA_TYPE_FLOAT32;
    const auto SUM = CUCORE_REDUCE_SUM;
    cucore_communicator_t *c = c_[0];
    cucore_stream_t *s = s_[0];
    struct Row {
        cucore_status_t status;
        const char *function;
        const char *text;
    };
    fake::nccl::reset_calls();
    const Row rows[] = {
        {cucore_communicator_all_reduce(c, host, mine, 0, F32, SUM, s), "cucore_communicator_all_reduce",
         "'send' is host memory; the communicator runs on device 0"},
        {cucore_communicator_all_reduce(c, mine, theirs, 0, F32, SUM, s), "cucore_communicator_all_reduce",
         "'recv' is memory of device 1; the communicator runs on device 0"},
        {cucore_communicator_all_reduce(c, mine, mine, 0, F32, SUM, s_[1]), "cucore_communicator_all_reduce",
         "'stream' is a stream of device 1; the communicator runs on device 0"},
        {cucore_communicator_all_reduce(c, mine, mine, 0, CUCORE_DATA_TYPE_UNSET, SUM, s),
         "cucore_communicator_all_reduce", "'type'"},
        {cucore_communicator_all_reduce(c, mine, mine, 0, static_cast<cucore_data_type_t>(13), SUM, s),
         "cucore_communicator_all_reduce", "'type'"},
        {cucore_communicator_all_reduce(c, mine, mine, 0, F32, static_cast<cucore_reduce_op_t>(5), s),
         "cucore_communicator_all_reduce", "'op'"},
        {cucore_communicator_all_gather(c, mine, host, 2, F32, s), "cucore_communicator_all_gather",
         "'recv' is host memory"},
        {cucore_communicator_reduce_scatter(c, mine, mine, 0, F32, static_cast<cucore_reduce_op_t>(-1), s),
         "cucore_communicator_reduce_scatter", "'op'"},
        {cucore_communicator_broadcast(c, nullptr, mine, 0, F32, 0, s), "cucore_communicator_broadcast",
         "argument 'send' is NULL on the root rank"},
        {cucore_communicator_broadcast(c, mine, mine, 0, F32, 2, s), "cucore_communicator_broadcast",
         "argument 'root' is 2; ranks are 0..1"},
        {cucore_communicator_reduce(c, mine, nullptr, 0, F32, SUM, 0, s), "cucore_communicator_reduce",
         "argument 'recv' is NULL on the root rank"},
        {cucore_communicator_reduce(c, mine, mine, 0, F32, SUM, -1, s), "cucore_communicator_reduce",
         "argument 'root' is -1; ranks are 0..1"},
        {cucore_communicator_send(c, mine, 0, F32, 2, s), "cucore_communicator_send", "argument 'peer' is 2"},
        {cucore_communicator_recv(c, mine, 0, F32, -1, s), "cucore_communicator_recv", "argument 'peer' is -1"},
        {cucore_communicator_send(c, theirs, 0, F32, 1, s), "cucore_communicator_send",
         "'buffer' is memory of device 1"},
        {cucore_communicator_recv(c, host, 0, F32, 1, s), "cucore_communicator_recv", "'buffer' is host memory"},
    };
    EXPECT_EQ(fake::nccl::calls(), 0) << "arguments are checked before NCCL is called";
    // Each call again, its message read at once (the last error is the last call's).
    size_t i = 0;
    auto check = [&](cucore_status_t status) {
        const Row &row = rows[i++];
        EXPECT_EQ(row.status, CUCORE_ERROR_INVALID_ARGUMENT) << row.text;
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << row.text;
        EXPECT_EQ(message().rfind(std::string(row.function) + ":", 0), 0u) << message();
        EXPECT_NE(message().find(row.text), std::string::npos) << message();
    };
    check(cucore_communicator_all_reduce(c, host, mine, 0, F32, SUM, s));
    check(cucore_communicator_all_reduce(c, mine, theirs, 0, F32, SUM, s));
    check(cucore_communicator_all_reduce(c, mine, mine, 0, F32, SUM, s_[1]));
    check(cucore_communicator_all_reduce(c, mine, mine, 0, CUCORE_DATA_TYPE_UNSET, SUM, s));
    check(cucore_communicator_all_reduce(c, mine, mine, 0, static_cast<cucore_data_type_t>(13), SUM, s));
    check(cucore_communicator_all_reduce(c, mine, mine, 0, F32, static_cast<cucore_reduce_op_t>(5), s));
    check(cucore_communicator_all_gather(c, mine, host, 2, F32, s));
    check(cucore_communicator_reduce_scatter(c, mine, mine, 0, F32, static_cast<cucore_reduce_op_t>(-1), s));
    check(cucore_communicator_broadcast(c, nullptr, mine, 0, F32, 0, s));
    check(cucore_communicator_broadcast(c, mine, mine, 0, F32, 2, s));
    check(cucore_communicator_reduce(c, mine, nullptr, 0, F32, SUM, 0, s));
    check(cucore_communicator_reduce(c, mine, mine, 0, F32, SUM, -1, s));
    check(cucore_communicator_send(c, mine, 0, F32, 2, s));
    check(cucore_communicator_recv(c, mine, 0, F32, -1, s));
    check(cucore_communicator_send(c, theirs, 0, F32, 1, s));
    check(cucore_communicator_recv(c, host, 0, F32, 1, s));
    EXPECT_EQ(fake::nccl::calls(), 0);
    for (cucore_buffer_t *b : {mine, theirs, host}) cucore_buffer_release(b);
    cucore_memory_resource_release(pinned);
}

TEST_F(Collectives, GroupsNestPerThreadAndNcclSeesTheOperationsAtTheOutermostEnd) {
    make_all();
    EXPECT_EQ(cucore_communicator_group_depth(), 0);
    EXPECT_EQ(cucore_communicator_group_end(), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("no group is open on this thread"), std::string::npos) << message();
    const TypeCase &f32 = kTypes[7];
    cucore_buffer_t *send[2] = {buffer_with(0, encode(f32, kRank[0])), buffer_with(1, encode(f32, kRank[1]))};
    cucore_buffer_t *recv[2] = {buffer(0, 16), buffer(1, 16)};
    ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_group_depth(), 2);
    std::thread([] {
        EXPECT_EQ(cucore_communicator_group_depth(), 0) << "groups are per thread";
        EXPECT_EQ(cucore_communicator_group_end(), CUCORE_ERROR_INVALID_STATE);
    }).join();
    for (int r = 0; r < 2; ++r)
        ASSERT_EQ(cucore_communicator_all_reduce(c_[r], send[r], recv[r], 0, f32.type, CUCORE_REDUCE_SUM, s_[r]),
                  CUCORE_SUCCESS)
            << message();
    EXPECT_EQ(fake::nccl::pending_operations(), 2);
    ASSERT_EQ(cucore_communicator_group_end(), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_group_depth(), 1);
    EXPECT_EQ(fake::nccl::completed_operations(), 0) << "still inside the outer group";
    ASSERT_EQ(cucore_communicator_group_end(), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_group_depth(), 0);
    EXPECT_EQ(fake::nccl::completed_operations(), 1);
    for (int r = 0; r < 2; ++r) expect_bytes(recv[r], r, encode(f32, {3, 4, 7, 8}), "after the group");
    for (cucore_buffer_t *b : {send[0], send[1], recv[0], recv[1]}) cucore_buffer_release(b);
}

TEST_F(Collectives, HandlesReleasedRightAfterEnqueueingLiveUntilTheOperationHasRun) {
    make_all();
    const TypeCase &f32 = kTypes[7];
    cucore_stream_t *t[2] = {};
    cucore_buffer_t *send[2], *recv[2];
    for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(cucore_stream_create(d_[r], nullptr, &t[r]), CUCORE_SUCCESS);
        send[r] = buffer_with(r, encode(f32, kRank[r]));
        recv[r] = buffer(r, 16);
    }
    const size_t buffers = live(CUCORE_OBJECT_BUFFER), streams = live(CUCORE_OBJECT_STREAM);
    ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS);
    for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(cucore_communicator_all_reduce(c_[r], send[r], recv[r], 0, f32.type, CUCORE_REDUCE_SUM, t[r]),
                  CUCORE_SUCCESS)
            << message();
        EXPECT_EQ(cucore_buffer_release(send[r]), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_buffer_release(recv[r]), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_stream_release(t[r]), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_communicator_release(c_[r]), CUCORE_SUCCESS);
        c_[r] = nullptr;
    }
    cucore::core::drain_graph_releases();
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers) << "the group holds the buffers";
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams) << "and the streams";
    EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), 2u) << "and the communicators";
    EXPECT_EQ(fake::nccl::live_comms(), 2);
    ASSERT_EQ(cucore_communicator_group_end(), CUCORE_SUCCESS) << message();
    cucore::core::drain_graph_releases();
    EXPECT_EQ(fake::nccl::completed_operations(), 1);
    EXPECT_EQ(fake::nccl::faults(), 0) << "the buffers were live when NCCL read and wrote them: "
                                       << fake::nccl::last_fault();
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers - 4) << "released once the streams passed the operation";
    EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), 0u);
    EXPECT_EQ(fake::nccl::live_comms(), 0);
}

TEST_F(Collectives, AGraphBuilderCaptureHoldsWhatTheOperationUsesAndRunsItAtEachLaunch) {
    make_all();
    const TypeCase &f32 = kTypes[7];
    cucore_buffer_t *send[2] = {buffer_with(0, encode(f32, kRank[0])), buffer_with(1, encode(f32, kRank[1]))};
    cucore_buffer_t *recv[2] = {buffer(0, 16), buffer(1, 16)};
    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s_[0], &builder), CUCORE_SUCCESS) << message();
    cucore_stream_t *captured = nullptr;
    ASSERT_EQ(cucore_graph_builder_stream(builder, &captured), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_THREAD_LOCAL), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_communicator_all_reduce(c_[0], send[0], recv[0], 0, f32.type, CUCORE_REDUCE_SUM, captured),
              CUCORE_SUCCESS)
        << message();
    ASSERT_EQ(cucore_graph_builder_end_building(builder), CUCORE_SUCCESS) << message();
    cucore_graph_t *graph = nullptr;
    ASSERT_EQ(cucore_graph_builder_complete(builder, nullptr, &graph), CUCORE_SUCCESS) << message();
    cucore_stream_release(captured);
    cucore_graph_builder_release(builder);
    const size_t buffers = live(CUCORE_OBJECT_BUFFER);
    EXPECT_EQ(cucore_buffer_release(send[0]), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_release(c_[0]), CUCORE_SUCCESS);
    c_[0] = nullptr;
    cucore::core::drain_graph_releases();
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers) << "the graph holds rank 0's send buffer";
    EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), 2u) << "and its communicator";
    EXPECT_EQ(fake::nccl::pending_operations(), 0) << "captured: NCCL runs it when the graph runs";
    for (int launch = 1; launch <= 2; ++launch) {
        SCOPED_TRACE("launch " + std::to_string(launch));
        ASSERT_EQ(cucore_communicator_all_reduce(c_[1], send[1], recv[1], 0, f32.type, CUCORE_REDUCE_SUM, s_[1]),
                  CUCORE_SUCCESS);
        EXPECT_EQ(fake::nccl::completed_operations(), launch - 1) << "rank 0 has not run yet";
        ASSERT_EQ(cucore_graph_launch(graph, s_[0]), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_synchronize(s_[0]), CUCORE_SUCCESS);
        EXPECT_EQ(fake::nccl::completed_operations(), launch);
        for (int r = 0; r < 2; ++r) expect_bytes(recv[r], r, encode(f32, {3, 4, 7, 8}), "rank " + std::to_string(r));
    }
    EXPECT_EQ(cucore_graph_release(graph), CUCORE_SUCCESS);
    cucore::core::drain_graph_releases();
    EXPECT_EQ(live(CUCORE_OBJECT_BUFFER), buffers - 1) << "the graph let go of rank 0's send buffer";
    EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), 1u);
    for (cucore_buffer_t *b : {send[1], recv[0], recv[1]}) cucore_buffer_release(b);
}

TEST_F(Collectives, AStreamCapturedOutsideAGraphBuilderIsRefused) {
    make_all();
    cucore_buffer_t *b = buffer(0, 16);
    void *raw = nullptr;
    ASSERT_EQ(cucore_stream_handle(s_[0], &raw), CUCORE_SUCCESS);
    const CUstream cu = static_cast<CUstream>(raw);
    ASSERT_EQ(fake::table().cuStreamBeginCapture(cu, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    fake::nccl::reset_calls();
    EXPECT_EQ(cucore_communicator_all_reduce(c_[0], b, b, 0, CUCORE_DATA_TYPE_FLOAT32, CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("captured outside a cucore graph builder"), std::string::npos) << message();
    EXPECT_EQ(fake::nccl::calls(), 0);
    CUgraph g = nullptr;
    ASSERT_EQ(fake::table().cuStreamEndCapture(cu, &g), CUDA_SUCCESS);
    ASSERT_EQ(fake::table().cuGraphDestroy(g), CUDA_SUCCESS);
    cucore_buffer_release(b);
}

TEST_F(Collectives, ACliqueFromAnIdPutsEachRankOnItsDevice) {
    cucore_communicator_id_t id, other;
    ASSERT_EQ(cucore_communicator_id_create(&id), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_communicator_id_create(&other), CUCORE_SUCCESS);
    EXPECT_NE(std::memcmp(id.internal, other.internal, sizeof id.internal), 0) << "each id names a new clique";
    ASSERT_EQ(cucore_communicator_group_start(), CUCORE_SUCCESS);
    for (int r = 0; r < 2; ++r) EXPECT_EQ(cucore_communicator_create(d_[r], &id, 2, r, &c_[r]), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_communicator_group_end(), CUCORE_SUCCESS);
    ASSERT_TRUE(c_[0] && c_[1]);
    for (int r = 0; r < 2; ++r) {
        int rank = -1, count = -1, ordinal = -1, nccl_device = -1;
        ASSERT_EQ(cucore_communicator_rank(c_[r], &rank), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_communicator_rank_count(c_[r], &count), CUCORE_SUCCESS);
        EXPECT_EQ(rank, r);
        EXPECT_EQ(count, 2);
        cucore_device_t *d = nullptr;
        ASSERT_EQ(cucore_communicator_device(c_[r], &d), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_device_ordinal(d, &ordinal), CUCORE_SUCCESS);
        EXPECT_EQ(ordinal, r);
        cucore_device_release(d);
        void *comm = nullptr;
        ASSERT_EQ(cucore_communicator_handle(c_[r], &comm), CUCORE_SUCCESS);
        ASSERT_NE(comm, nullptr);
        ASSERT_EQ(fake::nccl::current_table().ncclCommCuDevice(static_cast<cucore::driver::nccl::Comm>(comm), &nccl_device),
                  cucore::driver::nccl::kSuccess);
        EXPECT_EQ(nccl_device, r) << "ncclCommInitRank ran in the device's primary context";
    }
    void *a = nullptr, *b = nullptr;
    cucore_communicator_handle(c_[0], &a);
    cucore_communicator_handle(c_[1], &b);
    EXPECT_EQ(fake::nccl::clique_of(static_cast<cucore::driver::nccl::Comm>(a)),
              fake::nccl::clique_of(static_cast<cucore::driver::nccl::Comm>(b)));
    const TypeCase &i32 = kTypes[2];
    cucore_buffer_t *buffers[2] = {buffer_with(0, encode(i32, kRank[0])), buffer_with(1, encode(i32, kRank[1]))};
    grouped([&](int r) {
        return cucore_communicator_all_reduce(c_[r], buffers[r], buffers[r], 0, i32.type, CUCORE_REDUCE_PROD, s_[r]);
    });
    for (int r = 0; r < 2; ++r) expect_bytes(buffers[r], r, encode(i32, {2, 4, 12, 16}), "product");
    for (cucore_buffer_t *x : buffers) cucore_buffer_release(x);
}

TEST_F(Collectives, RanksOnTwoThreadsNeedNoGroup) {
    cucore_communicator_id_t id;
    ASSERT_EQ(cucore_communicator_id_create(&id), CUCORE_SUCCESS);
    const TypeCase &f64 = kTypes[8];
    cucore_buffer_t *send[2] = {buffer_with(0, encode(f64, kRank[0])), buffer_with(1, encode(f64, kRank[1]))};
    cucore_buffer_t *recv[2] = {buffer(0, 64), buffer(1, 64)};
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&, r] {
            EXPECT_EQ(cucore_communicator_create(d_[r], &id, 2, r, &c_[r]), CUCORE_SUCCESS) << message();
            EXPECT_EQ(cucore_communicator_all_gather(c_[r], send[r], recv[r], 0, f64.type, s_[r]), CUCORE_SUCCESS)
                << message();
        });
    for (auto &t : threads) t.join();
    for (int r = 0; r < 2; ++r) expect_bytes(recv[r], r, encode(f64, concat(kRank[0], kRank[1])), "gathered");
    for (cucore_buffer_t *b : {send[0], send[1], recv[0], recv[1]}) cucore_buffer_release(b);
}

TEST_F(CommunicatorTest, CreateChecksCountsRanksAndDevicesBeforeNccl) {
    cucore_communicator_id_t id;
    ASSERT_EQ(cucore_communicator_id_create(&id), CUCORE_SUCCESS);
    fake::nccl::reset_calls();
    cucore_communicator_t *c = reinterpret_cast<cucore_communicator_t *>(1);
    EXPECT_EQ(cucore_communicator_create(d_[0], &id, 0, 0, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'rank_count' is 0"), std::string::npos) << message();
    EXPECT_EQ(c, nullptr);
    EXPECT_EQ(cucore_communicator_create(d_[0], &id, 2, 2, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'rank' is 2; ranks are 0..1"), std::string::npos) << message();
    EXPECT_EQ(cucore_communicator_create(d_[0], &id, 2, -1, &c), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'rank' is -1"), std::string::npos) << message();
    cucore_device_t *twice[2] = {d_[1], d_[1]};
    cucore_communicator_t *out[2] = {reinterpret_cast<cucore_communicator_t *>(1),
                                     reinterpret_cast<cucore_communicator_t *>(1)};
    EXPECT_EQ(cucore_communicator_create_all(twice, 2, out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("devices[0] and devices[1] are both device 1"), std::string::npos) << message();
    EXPECT_TRUE(out[0] == nullptr && out[1] == nullptr) << "all or nothing";
    EXPECT_EQ(cucore_communicator_create_all(twice, 0, out), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'count' is 0"), std::string::npos) << message();
    EXPECT_EQ(nccl_calls("ncclCommInitRank") + nccl_calls("ncclCommInitAll"), 0);
    // One rank alone is a clique too.
    cucore_communicator_t *alone = nullptr;
    ASSERT_EQ(cucore_communicator_create_all(&d_[1], 1, &alone), CUCORE_SUCCESS) << message();
    int count = 0;
    EXPECT_EQ(cucore_communicator_rank_count(alone, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 1);
    EXPECT_EQ(cucore_communicator_retain(alone), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_communicator_release(alone), CUCORE_SUCCESS);
    EXPECT_EQ(fake::nccl::live_comms(), 1) << "one reference left";
    EXPECT_EQ(cucore_communicator_release(alone), CUCORE_SUCCESS);
    EXPECT_EQ(fake::nccl::live_comms(), 0) << "the last release destroys the NCCL comm";
}

TEST_F(CommunicatorTest, LibraryVersionDataTypeSizesAndTheFloat8Floor) {
    int version = 0;
    ASSERT_EQ(cucore_communicator_library_version(&version), CUCORE_SUCCESS) << message();
    EXPECT_EQ(version, fake::nccl::kDefaultVersion);
    for (const TypeCase &t : kTypes) {
        uint32_t size = 0;
        ASSERT_EQ(cucore_data_type_size(t.type, &size), CUCORE_SUCCESS) << t.name;
        EXPECT_EQ(size, t.size) << t.name;
    }
    uint32_t size = 7;
    EXPECT_EQ(cucore_data_type_size(CUCORE_DATA_TYPE_UNSET, &size), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("'type'"), std::string::npos) << message();
    EXPECT_EQ(cucore_data_type_size(static_cast<cucore_data_type_t>(13), &size), CUCORE_ERROR_INVALID_ARGUMENT);
    // NCCL 2.23 has no 8-bit floats: NOT_SUPPORTED naming the version, NCCL not called.
    fake::nccl::install(22304);
    ASSERT_EQ(cucore_communicator_library_version(&version), CUCORE_SUCCESS);
    EXPECT_EQ(version, 22304);
    make_all();
    cucore_buffer_t *b = buffer(0, 16);
    fake::nccl::reset_calls();
    EXPECT_EQ(cucore_communicator_all_reduce(c_[0], b, b, 0, CUCORE_DATA_TYPE_FLOAT8_E4M3, CUCORE_REDUCE_SUM, s_[0]),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_NE(message().find("8-bit float collectives need NCCL 2.24 or later; NCCL 22304 is loaded"),
              std::string::npos)
        << message();
    EXPECT_EQ(fake::nccl::calls(), 0);
    cucore_buffer_release(b);
}

}  // namespace
