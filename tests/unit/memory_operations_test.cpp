// Host locations, batched copies, batched prefetches and discards, and stream
// memory operations against the fake driver (what its fakes check and record:
// tests/fake_driver/memory_operations.hpp). Every copy and write really moves
// bytes (the fake's device memory is host memory), so results are read back.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../fake_driver/memory_operations.hpp"
#include "enum_argument_calls.h"
#include "memory_support.hpp"

namespace {

constexpr cucore_location_t kHost{CUCORE_LOCATION_HOST, 0};
constexpr cucore_location_t kDevice0{CUCORE_LOCATION_DEVICE, 0};
constexpr cucore_location_t kDevice1{CUCORE_LOCATION_DEVICE, 1};

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Device 0's default pool, with three device buffers of 1024 bytes and three
// managed buffers of 4096 bytes.
class MemoryOperationsTest : public MemoryFixture {
  protected:
    void SetUp() override {
        MemoryFixture::SetUp();
        ASSERT_EQ(cucore_device_memory_resource_get_default(d0_, &pool_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_managed_memory_resource_create(d0_, nullptr, &managed_), CUCORE_SUCCESS) << message();
        for (auto &b : dev_) b = alloc(pool_, 1024, s0_);
        for (auto &b : man_) b = alloc(managed_, 4096, s0_);
    }
    void TearDown() override {
        for (auto *b : dev_) cucore_buffer_release(b);
        for (auto *b : man_) cucore_buffer_release(b);
        cucore_memory_resource_release(managed_);
        cucore_memory_resource_release(pool_);
        MemoryFixture::TearDown();
    }
    static cucore_copy_batch_item_t item(cucore_buffer_t *src, uint64_t src_offset, cucore_buffer_t *dst,
                                         uint64_t dst_offset, uint64_t size, uint32_t options_index = 0) {
        cucore_copy_batch_item_t i{};
        i.src = src;
        i.src_offset = src_offset;
        i.dst = dst;
        i.dst_offset = dst_offset;
        i.size = size;
        i.options_index = options_index;
        return i;
    }
    cucore_location_t last_prefetch(cucore_buffer_t *b) {
        cucore_location_t l{static_cast<cucore_location_type_t>(-1), -1};
        EXPECT_EQ(cucore_buffer_last_prefetch_location(b, &l), CUCORE_SUCCESS) << message();
        return l;
    }
    uint32_t read32(cucore_buffer_t *b, uint64_t offset) {
        const Bytes bytes = read(b, offset, 4);
        uint32_t v;
        std::memcpy(&v, bytes.data(), 4);
        return v;
    }
    uint64_t read64(cucore_buffer_t *b, uint64_t offset) {
        const Bytes bytes = read(b, offset, 8);
        uint64_t v;
        std::memcpy(&v, bytes.data(), 8);
        return v;
    }

    cucore_memory_resource_t *pool_ = nullptr, *managed_ = nullptr;
    cucore_buffer_t *dev_[3] = {};
    cucore_buffer_t *man_[3] = {};
};

// ---- host locations ----

TEST_F(MemoryOperationsTest, HostNumaCurrentIsANode) {
    int node = -1;
    ASSERT_EQ(cucore_host_numa_current(&node), CUCORE_SUCCESS) << message();
    EXPECT_GE(node, 0);
    EXPECT_EQ(cucore_host_numa_current(nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "numa_id")) << message();
}

// ---- batched copies ----

TEST_F(MemoryOperationsTest, CopyBatchMovesEveryRangeWithItsOptionsInRuns) {
    const Bytes a = pattern(1024, 1), b = pattern(1024, 2);
    write(dev_[0], 0, a);
    Bytes host_in = pattern(256, 3), host_out(128, 0);
    cucore_copy_options_t stream_order = CUCORE_COPY_OPTIONS_INIT;
    cucore_copy_options_t during_call = CUCORE_COPY_OPTIONS_INIT;
    during_call.src_access_order = CUCORE_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    during_call.overlap_mode = CUCORE_MEMCPY_OVERLAP_MODE_PREFER_OVERLAP_WITH_COMPUTE;
    during_call.dst_location_hint = kDevice1;
    const cucore_copy_options_t *options[] = {&stream_order, &during_call};
    std::vector<cucore_copy_batch_item_t> items = {
        item(dev_[0], 0, dev_[1], 512, 256, 0),    // device -> device
        item(dev_[0], 256, dev_[2], 0, 256, 0),    // device -> device
        item(nullptr, 0, dev_[1], 0, 256, 1),      // host -> device, read during the call
        item(dev_[0], 512, nullptr, 0, 128, 0),    // device -> host
        item(dev_[0], 0, dev_[2], 1000, 0, 1),     // zero bytes: skipped
    };
    items[2].src_pointer = host_in.data();
    items[3].dst_pointer = host_out.data();
    ASSERT_EQ(cucore_copy_batch(s0_, items.data(), items.size(), options, 2), CUCORE_SUCCESS) << message();
    host_in.assign(256, 0);  // read during the call: changing it now changes nothing
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);

    const Bytes d1 = read_all(dev_[1]), d2 = read_all(dev_[2]);
    EXPECT_EQ(Bytes(d1.begin() + 512, d1.begin() + 768), Bytes(a.begin(), a.begin() + 256));
    EXPECT_EQ(Bytes(d2.begin(), d2.begin() + 256), Bytes(a.begin() + 256, a.begin() + 512));
    EXPECT_EQ(Bytes(d1.begin(), d1.begin() + 256), pattern(256, 3));
    EXPECT_EQ(host_out, Bytes(a.begin() + 512, a.begin() + 640));
    (void)b;

    // Four copies (the empty one dropped) in three runs of options: 0,0 | 1 | 0.
    const fake::CopyBatchRecord r = fake::last_copy_batch();
    EXPECT_EQ(r.count, 4u);
    ASSERT_EQ(r.attribute_starts, (std::vector<size_t>{0, 2, 3}));
    EXPECT_EQ(r.attributes[0].srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);  // the default
    EXPECT_EQ(r.attributes[1].srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL);
    EXPECT_EQ(r.attributes[1].flags, static_cast<unsigned>(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE));
    EXPECT_EQ(r.attributes[1].dstLocHint.type, CU_MEM_LOCATION_TYPE_DEVICE);
    EXPECT_EQ(r.attributes[1].dstLocHint.id, 1);
    EXPECT_EQ(r.attributes[1].srcLocHint.type, CU_MEM_LOCATION_TYPE_INVALID);  // no hint
    EXPECT_EQ(r.attributes[2].flags, 0u);
}

TEST_F(MemoryOperationsTest, CopyBatchWithoutOptionsUsesStreamOrderAndNothingToCopyCallsNothing) {
    write(dev_[0], 0, pattern(1024, 5));
    const cucore_copy_batch_item_t one = item(dev_[0], 0, dev_[1], 0, 1024);
    ASSERT_EQ(cucore_copy_batch(s0_, &one, 1, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_all(dev_[1]), pattern(1024, 5));
    EXPECT_EQ(fake::last_copy_batch().attributes.size(), 1u);
    fake::reset_calls();
    const cucore_copy_batch_item_t empty = item(dev_[0], 0, dev_[1], 0, 0);
    EXPECT_EQ(cucore_copy_batch(s0_, &empty, 1, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_copy_batch(s0_, nullptr, 0, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_FALSE(called("cuMemcpyBatchAsync"));
}

TEST_F(MemoryOperationsTest, CopyBatchRefusesBadItemsBeforeCopyingAny) {
    write(dev_[1], 0, pattern(1024, 6));
    cucore_copy_batch_item_t items[2] = {item(dev_[0], 0, dev_[1], 0, 16), item(dev_[0], 0, dev_[2], 1000, 100)};
    EXPECT_EQ(cucore_copy_batch(s0_, items, 2, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "items[1].dst")) << message();
    EXPECT_EQ(read_all(dev_[1]), pattern(1024, 6));  // the valid first copy did not run either

    Bytes host(16);
    items[1] = item(dev_[0], 0, dev_[2], 0, 16);
    items[1].src_pointer = host.data();  // a buffer and a pointer
    EXPECT_EQ(cucore_copy_batch(s0_, items, 2, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "items[1].src")) << message();
    items[1] = item(nullptr, 0, dev_[2], 0, 16);  // neither
    EXPECT_EQ(cucore_copy_batch(s0_, items, 2, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    items[1] = item(dev_[0], 0, dev_[2], 0, 16);
    items[1].reserved = 1;
    EXPECT_EQ(cucore_copy_batch(s0_, items, 2, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "items[1].reserved")) << message();
    items[1].reserved = 0;
    items[1].options_index = 1;  // only the default exists
    EXPECT_EQ(cucore_copy_batch(s0_, items, 2, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "options_index")) << message();
    EXPECT_EQ(cucore_copy_batch(s0_, nullptr, 2, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_copy_batch(s0_, items, 1, nullptr, 1), CUCORE_ERROR_INVALID_ARGUMENT);  // options NULL
}

TEST_F(MemoryOperationsTest, CopyBatchChecksEachOptionsField) {
    const cucore_copy_batch_item_t one = item(dev_[0], 0, dev_[1], 0, 16);
    cucore_copy_options_t o = CUCORE_COPY_OPTIONS_INIT;
    const cucore_copy_options_t *options[] = {&o};
    o.src_access_order = static_cast<cucore_memcpy_src_access_order_t>(4);
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, options, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "options[0].src_access_order")) << message();
    o = CUCORE_COPY_OPTIONS_INIT;
    o.overlap_mode = static_cast<cucore_memcpy_overlap_mode_t>(2);
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, options, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "options[0].overlap_mode")) << message();
    o = CUCORE_COPY_OPTIONS_INIT;
    o.src_location_hint = {CUCORE_LOCATION_DEVICE, -1};
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, options, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "options[0].src_location_hint")) << message();
    o = CUCORE_COPY_OPTIONS_INIT;
    o.struct_size = 2;  // ends inside a field
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, options, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore_copy_options_t *defaults[] = {nullptr};  // an element NULL: the defaults
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, defaults, 1), CUCORE_SUCCESS) << message();
}

TEST_F(MemoryOperationsTest, CopyBatchRefusesTheLegacyStreamClosedBuffersAndCapture) {
    const cucore_copy_batch_item_t one = item(dev_[0], 0, dev_[1], 0, 16);
    cucore_stream_t *legacy = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d0_, &legacy), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_copy_batch(legacy, &one, 1, nullptr, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "legacy default stream")) << message();
    cucore_stream_release(legacy);
    cucore_stream_t *per_thread = nullptr;
    ASSERT_EQ(cucore_stream_get_per_thread_default(d0_, &per_thread), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_copy_batch(per_thread, &one, 1, nullptr, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_stream_synchronize(per_thread), CUCORE_SUCCESS);
    cucore_stream_release(per_thread);

    cucore_graph_builder_t *builder = nullptr;
    ASSERT_EQ(cucore_graph_builder_create(s0_, &builder), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graph_builder_begin_building(builder, CUCORE_CAPTURE_MODE_GLOBAL), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, nullptr, 0), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(message(), "captured")) << message();
    EXPECT_EQ(cucore_graph_builder_end_building(builder), CUCORE_SUCCESS) << message();
    cucore_graph_builder_release(builder);

    ASSERT_EQ(cucore_buffer_close(dev_[2], nullptr), CUCORE_SUCCESS);
    const cucore_copy_batch_item_t closed = item(dev_[0], 0, dev_[2], 0, 16);
    EXPECT_EQ(cucore_copy_batch(s0_, &closed, 1, nullptr, 0), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(message(), "items[0].dst")) << message();
}

TEST_F(MemoryOperationsTest, BatchedEntryPointsMissingAreNotSupportedNamingCuda13) {
    fake::table().cuMemcpyBatchAsync = nullptr;
    fake::table().cuMemPrefetchBatchAsync = nullptr;
    fake::table().cuMemDiscardBatchAsync = nullptr;
    fake::table().cuMemDiscardAndPrefetchBatchAsync = nullptr;
    fake::reinstall();
    const cucore_copy_batch_item_t one = item(dev_[0], 0, dev_[1], 0, 16);
    EXPECT_EQ(cucore_copy_batch(s0_, &one, 1, nullptr, 0), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "CUDA 13.0") && contains(message(), "cuMemcpyBatchAsync")) << message();
    EXPECT_EQ(cucore_prefetch_batch(s0_, man_, 1, &kHost, 1), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "cuMemPrefetchBatchAsync")) << message();
    EXPECT_EQ(cucore_discard_batch(s0_, man_, 1), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_discard_prefetch_batch(s0_, man_, 1, &kHost, 1), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "CUDA 13.0")) << message();
}

// ---- batched strided copies ----

TEST_F(MemoryOperationsTest, Copy3DBatchMovesEveryRegion) {
    const Bytes image = pattern(1024, 11);  // 16 rows of 64 bytes
    write(dev_[0], 0, image);
    write(dev_[1], 0, Bytes(1024, 0));
    write(dev_[2], 0, Bytes(1024, 0));
    Bytes tile(4 * 8, 0);
    // 1) a 2D tile of 8 x 4 at byte 3 of row 2 of dev_[0] (pitch 64) into packed host rows of 8;
    cucore_copy_3d_t a = CUCORE_COPY_3D_INIT;
    a.src.buffer = dev_[0];
    a.src.pitch = 64;
    a.src.x = 3;
    a.src.y = 2;
    a.dst.host = tile.data();
    a.dst.pitch = 8;
    a.width = 8;
    a.rows = 4;
    // 2) 3D: 2 slices of 3 rows of 16 bytes from dev_[0] (pitch 64, 4 rows per slice, slice 1) into dev_[1]
    //    (pitch 32, 3 rows per slice, at byte 100);
    cucore_copy_3d_t b = CUCORE_COPY_3D_INIT;
    b.src.buffer = dev_[0];
    b.src.pitch = 64;
    b.src.height = 4;
    b.src.z = 1;
    b.dst.buffer = dev_[1];
    b.dst.offset = 100;
    b.dst.pitch = 32;
    b.dst.height = 3;
    b.width = 16;
    b.rows = 3;
    b.depth = 2;
    // 3) nothing to copy (width 0): checked, skipped.
    cucore_copy_3d_t c = CUCORE_COPY_3D_INIT;
    c.src.buffer = dev_[2];
    c.src.pitch = 8;
    c.dst.buffer = dev_[2];
    c.dst.pitch = 8;
    const cucore_copy_3d_t *copies[] = {&a, &b, &c};
    ASSERT_EQ(cucore_copy_3d_batch(s0_, copies, 3, nullptr), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    for (size_t row = 0; row < 4; ++row)
        for (size_t x = 0; x < 8; ++x) ASSERT_EQ(tile[row * 8 + x], image[(2 + row) * 64 + 3 + x]) << row << "," << x;
    const Bytes got = read_all(dev_[1]);
    for (size_t z = 0; z < 2; ++z)
        for (size_t y = 0; y < 3; ++y)
            for (size_t x = 0; x < 16; ++x)
                ASSERT_EQ(got[100 + (z * 3 + y) * 32 + x], image[((1 + z) * 4 + y) * 64 + x]) << z << "," << y << "," << x;
    EXPECT_EQ(got[99], 0);
    EXPECT_EQ(read_all(dev_[2]), Bytes(1024, 0));
}

TEST_F(MemoryOperationsTest, Copy3DBatchRefusesBadCopiesBeforeAny) {
    write(dev_[1], 0, Bytes(1024, 0));
    cucore_copy_3d_t good = CUCORE_COPY_3D_INIT;
    good.src.buffer = dev_[0];
    good.src.pitch = 64;
    good.dst.buffer = dev_[1];
    good.dst.pitch = 64;
    good.width = 64;
    good.rows = 2;
    cucore_copy_3d_t bad = good;
    bad.dst.y = 15;  // rows 15 and 16 of a 16-row buffer
    const cucore_copy_3d_t *copies[] = {&good, &bad};
    EXPECT_EQ(cucore_copy_3d_batch(s0_, copies, 2, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "copies[1]") && contains(message(), "past the end")) << message();
    EXPECT_EQ(read_all(dev_[1]), Bytes(1024, 0));
    bad = good;
    bad.src.host = dev_;  // both buffer and host
    EXPECT_EQ(cucore_copy_3d_batch(s0_, copies, 2, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "copies[1]")) << message();
    const cucore_copy_3d_t *with_null[] = {&good, nullptr};
    EXPECT_EQ(cucore_copy_3d_batch(s0_, with_null, 2, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_copy_3d_batch(s0_, nullptr, 1, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_copy_options_t o = CUCORE_COPY_OPTIONS_INIT;
    o.src_access_order = static_cast<cucore_memcpy_src_access_order_t>(5);
    EXPECT_EQ(cucore_copy_3d_batch(s0_, copies, 1, &o), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "options.src_access_order")) << message();
    cucore_stream_t *legacy = nullptr;
    ASSERT_EQ(cucore_stream_get_legacy_default(d0_, &legacy), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_copy_3d_batch(legacy, copies, 1, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_stream_release(legacy);
    fake::table().cuMemcpy3DBatchAsync = nullptr;
    fake::reinstall();
    EXPECT_EQ(cucore_copy_3d_batch(s0_, copies, 1, nullptr), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "cuMemcpy3DBatchAsync") && contains(message(), "CUDA 13.0")) << message();
}

// ---- batched prefetches and discards ----

TEST_F(MemoryOperationsTest, PrefetchBatchMovesEachBufferAndMergesEqualLocations) {
    ASSERT_EQ(cucore_prefetch_batch(s0_, man_, 3, &kDevice1, 1), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    for (auto *b : man_) {
        EXPECT_EQ(last_prefetch(b).type, CUCORE_LOCATION_DEVICE);
        EXPECT_EQ(last_prefetch(b).id, 1);
    }
    const cucore_location_t each[] = {kDevice0, kDevice0, kHost};
    ASSERT_EQ(cucore_prefetch_batch(s0_, man_, 3, each, 3), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    EXPECT_EQ(last_prefetch(man_[0]).type, CUCORE_LOCATION_DEVICE);
    EXPECT_EQ(last_prefetch(man_[1]).id, 0);
    EXPECT_EQ(last_prefetch(man_[2]).type, CUCORE_LOCATION_HOST);
    const fake::PrefetchBatchRecord r = fake::last_prefetch_batch();
    EXPECT_EQ(r.count, 3u);
    EXPECT_EQ(r.location_starts, (std::vector<size_t>{0, 2}));
}

TEST_F(MemoryOperationsTest, DiscardBatchesDropContentsAndDiscardPrefetchMoves) {
    write(man_[0], 0, pattern(4096, 7));
    write(man_[1], 0, pattern(4096, 8));
    ASSERT_EQ(cucore_discard_batch(s0_, man_, 2), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read_all(man_[0]), Bytes(4096, fake::kDiscardedByte));
    EXPECT_EQ(read_all(man_[1]), Bytes(4096, fake::kDiscardedByte));
    write(man_[2], 0, pattern(4096, 9));
    const cucore_location_t each[] = {kDevice1, kHost};
    cucore_buffer_t *two[] = {man_[2], man_[0]};
    ASSERT_EQ(cucore_discard_prefetch_batch(s0_, two, 2, each, 2), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    EXPECT_EQ(read_all(man_[2]), Bytes(4096, fake::kDiscardedByte));
    EXPECT_EQ(last_prefetch(man_[2]).id, 1);
    EXPECT_EQ(last_prefetch(man_[0]).type, CUCORE_LOCATION_HOST);
}

TEST_F(MemoryOperationsTest, PrefetchAndDiscardBatchesRefuseBadArguments) {
    cucore_buffer_t *mixed[] = {man_[0], dev_[0]};
    EXPECT_EQ(cucore_prefetch_batch(s0_, mixed, 2, &kHost, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "buffers[1]") && contains(message(), "not managed")) << message();
    EXPECT_EQ(cucore_discard_batch(s0_, mixed, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore_location_t two[] = {kHost, kHost};
    EXPECT_EQ(cucore_prefetch_batch(s0_, man_, 3, two, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "location_count")) << message();
    EXPECT_EQ(cucore_prefetch_batch(s0_, man_, 3, nullptr, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore_location_t bad{static_cast<cucore_location_type_t>(9), 0};
    EXPECT_EQ(cucore_discard_prefetch_batch(s0_, man_, 3, &bad, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "locations[0]")) << message();
    EXPECT_EQ(cucore_discard_batch(s0_, nullptr, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_discard_batch(s0_, nullptr, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_close(man_[1], nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_prefetch_batch(s0_, man_, 3, &kHost, 1), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(message(), "buffers[1]")) << message();
}

// ---- stream memory operations ----

TEST_F(MemoryOperationsTest, WritesStoreValuesInStreamOrder) {
    write(dev_[0], 0, Bytes(1024, 0));
    ASSERT_EQ(cucore_stream_write_value_32(s0_, dev_[0], 4, 0xDEADBEEFu, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_write_value_64(s0_, dev_[0], 8, 0x0123456789ABCDEFull,
                                           CUCORE_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER),
              CUCORE_SUCCESS)
        << message();
    // The address form: the buffer's device address.
    ASSERT_EQ(cucore_stream_write_value_32(s0_, nullptr, address_of(dev_[0]) + 16, 7u, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(read32(dev_[0], 4), 0xDEADBEEFu);
    EXPECT_EQ(read64(dev_[0], 8), 0x0123456789ABCDEFull);
    EXPECT_EQ(read32(dev_[0], 16), 7u);
    EXPECT_EQ(read32(dev_[0], 0), 0u);
}

TEST_F(MemoryOperationsTest, WaitConditionsAreTheDriversIncludingTheCyclicGeq) {
    ASSERT_EQ(cucore_stream_write_value_32(s0_, dev_[0], 0, 5u, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_write_value_64(s0_, dev_[0], 8, 5u, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    struct Case {
        uint32_t value, flags;
        bool met;
    } cases[] = {
        {3, CUCORE_STREAM_WAIT_VALUE_GEQ, true},     {5, CUCORE_STREAM_WAIT_VALUE_GEQ, true},
        {6, CUCORE_STREAM_WAIT_VALUE_GEQ, false},    {0xFFFFFFF0u, CUCORE_STREAM_WAIT_VALUE_GEQ, true},  // wraps
        {5, CUCORE_STREAM_WAIT_VALUE_EQ, true},      {4, CUCORE_STREAM_WAIT_VALUE_EQ, false},
        {4, CUCORE_STREAM_WAIT_VALUE_AND, true},     {2, CUCORE_STREAM_WAIT_VALUE_AND, false},
        {0, CUCORE_STREAM_WAIT_VALUE_NOR, true},     {0xFFFFFFFAu, CUCORE_STREAM_WAIT_VALUE_NOR, false},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE("value " + std::to_string(c.value) + ", flags " + std::to_string(c.flags));
        const int before = fake::unmet_waits();
        ASSERT_EQ(cucore_stream_wait_value_32(s0_, dev_[0], 0, c.value, c.flags), CUCORE_SUCCESS) << message();
        EXPECT_EQ(fake::unmet_waits(), before + (c.met ? 0 : 1));
        const int before64 = fake::unmet_waits();
        const uint64_t wide = c.value >= 0xFFFFFFF0u ? ~uint64_t{0} - 15 : c.value;
        ASSERT_EQ(cucore_stream_wait_value_64(s0_, dev_[0], 8, c.flags == CUCORE_STREAM_WAIT_VALUE_NOR && !c.met ? ~uint64_t{5} : wide, c.flags),
                  CUCORE_SUCCESS)
            << message();
        EXPECT_EQ(fake::unmet_waits(), before64 + (c.met ? 0 : 1));
    }
}

TEST_F(MemoryOperationsTest, ValueOperationsRefuseBadMemoryAndFlags) {
    EXPECT_EQ(cucore_stream_write_value_32(s0_, dev_[0], 2, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "aligned to 4")) << message();
    EXPECT_EQ(cucore_stream_wait_value_64(s0_, dev_[0], 4, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "aligned to 8")) << message();
    EXPECT_EQ(cucore_stream_write_value_32(s0_, dev_[0], 1024, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_stream_write_value_64(s0_, dev_[0], 1020, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_stream_write_value_32(s0_, man_[0], 0, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "managed")) << message();
    EXPECT_EQ(cucore_stream_write_value_32(s0_, nullptr, 0, 1u, 0), CUCORE_ERROR_INVALID_ARGUMENT);  // address 0
    EXPECT_EQ(cucore_stream_write_value_32(s0_, dev_[0], 0, 1u, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "flags")) << message();
    EXPECT_EQ(cucore_stream_wait_value_32(s0_, dev_[0], 0, 1u, 4), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_stream_memory_barrier(s0_, static_cast<cucore_memory_barrier_scope_t>(2)),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "scope")) << message();
    ASSERT_EQ(cucore_buffer_close(dev_[2], nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_stream_write_value_32(s0_, dev_[2], 0, 1u, 0), CUCORE_ERROR_INVALID_STATE);
}

TEST_F(MemoryOperationsTest, AnyIntAsTheBarrierScopeIsReadSafely) {
    for (int32_t raw : {-1, 2, 0x7fffffff, INT32_MIN}) {
        EXPECT_EQ(enum_call_stream_memory_barrier(s0_, raw), CUCORE_ERROR_INVALID_ARGUMENT) << raw;
        EXPECT_TRUE(contains(message(), "'scope' (" + std::to_string(raw) + ")")) << message();
    }
    EXPECT_EQ(enum_call_stream_memory_barrier(s0_, CUCORE_MEMORY_BARRIER_SCOPE_DEVICE), CUCORE_SUCCESS) << message();
}

TEST_F(MemoryOperationsTest, DeviceAttributesGateSixtyFourBitNorAndFlush) {
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0, 0);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 0, 0);
    fake::set_attribute(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, 0, 0);
    EXPECT_EQ(cucore_stream_write_value_64(s0_, dev_[0], 0, 1u, 0), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "CAN_USE_64_BIT_STREAM_MEM_OPS")) << message();
    EXPECT_EQ(cucore_stream_wait_value_64(s0_, dev_[0], 0, 1u, 0), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_stream_wait_value_32(s0_, dev_[0], 0, 0u, CUCORE_STREAM_WAIT_VALUE_NOR),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "CAN_USE_STREAM_WAIT_VALUE_NOR")) << message();
    EXPECT_EQ(cucore_stream_wait_value_32(s0_, dev_[0], 0, 0u, CUCORE_STREAM_WAIT_VALUE_FLUSH),
              CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(cucore_stream_flush_remote_writes(s0_), CUCORE_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(contains(message(), "CAN_FLUSH_REMOTE_WRITES")) << message();
    // Device 1 keeps them.
    cucore_buffer_t *on1 = nullptr;
    cucore_memory_resource_t *pool1 = nullptr;
    ASSERT_EQ(cucore_device_memory_resource_get_default(d1_, &pool1), CUCORE_SUCCESS);
    on1 = alloc(pool1, 64, s1_);
    EXPECT_EQ(cucore_stream_write_value_64(s1_, on1, 0, 9u, 0), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_stream_flush_remote_writes(s1_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_stream_synchronize(s1_), CUCORE_SUCCESS);
    cucore_buffer_release(on1);
    cucore_memory_resource_release(pool1);
}

TEST_F(MemoryOperationsTest, BatchMemoryOpsRunInOrderAsOneDriverCall) {
    write(dev_[0], 0, Bytes(1024, 0));
    cucore_stream_memory_op_t ops[5] = {};
    ops[0] = {CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, 0, dev_[0], 0, 11};
    ops[1] = {CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_32, CUCORE_STREAM_WAIT_VALUE_EQ, dev_[0], 0, 11};
    ops[2] = {CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64, 0, nullptr, address_of(dev_[0]) + 8, 0x1122334455667788ull};
    ops[3] = {CUCORE_STREAM_MEMORY_OP_BARRIER, CUCORE_MEMORY_BARRIER_SCOPE_DEVICE, nullptr, 0, 0};
    ops[4] = {CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES, 0, nullptr, 0, 0};
    const int unmet = fake::unmet_waits();
    fake::reset_calls();
    ASSERT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 5), CUCORE_SUCCESS) << message();
    EXPECT_TRUE(called("cuStreamBatchMemOp"));
    EXPECT_FALSE(called("cuStreamWriteValue32"));
    EXPECT_EQ(fake::unmet_waits(), unmet);  // the wait came after the write
    EXPECT_EQ(read32(dev_[0], 0), 11u);
    EXPECT_EQ(read64(dev_[0], 8), 0x1122334455667788ull);
    const std::vector<CUstreamBatchMemOpParams> r = fake::last_batch_memory_ops();
    ASSERT_EQ(r.size(), 5u);
    EXPECT_EQ(r[1].waitValue.operation, CU_STREAM_MEM_OP_WAIT_VALUE_32);
    EXPECT_EQ(r[1].waitValue.flags, static_cast<unsigned>(CU_STREAM_WAIT_VALUE_EQ));
    EXPECT_EQ(r[3].memoryBarrier.operation, CU_STREAM_MEM_OP_BARRIER);
    EXPECT_EQ(r[3].memoryBarrier.flags, static_cast<unsigned>(CU_STREAM_MEMORY_BARRIER_TYPE_GPU));
    EXPECT_EQ(r[4].flushRemoteWrites.operation, CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES);
    ASSERT_EQ(cucore_stream_memory_barrier(s0_, CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::last_batch_memory_ops().at(0).memoryBarrier.flags,
              static_cast<unsigned>(CU_STREAM_MEMORY_BARRIER_TYPE_SYS));
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, nullptr, 0), CUCORE_SUCCESS) << message();
}

TEST_F(MemoryOperationsTest, BatchMemoryOpsCheckEveryOperationBeforeAny) {
    write(dev_[0], 0, Bytes(1024, 0));
    cucore_stream_memory_op_t ops[2] = {};
    ops[0] = {CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, 0, dev_[0], 0, 1};
    ops[1] = {CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, 0, dev_[0], 4, uint64_t{1} << 32};
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "ops[1].value")) << message();
    EXPECT_EQ(read32(dev_[0], 0), 0u);  // nothing ran
    ops[1] = {CUCORE_STREAM_MEMORY_OP_UNSET, 0, nullptr, 0, 0};
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "ops[1].type")) << message();
    ops[1] = {CUCORE_STREAM_MEMORY_OP_FLUSH_REMOTE_WRITES, 0, dev_[0], 0, 0};
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "names no memory")) << message();
    ops[1] = {CUCORE_STREAM_MEMORY_OP_BARRIER, 3, nullptr, 0, 0};
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "ops[1].flags")) << message();
    ops[1] = {CUCORE_STREAM_MEMORY_OP_WAIT_VALUE_64, 0, dev_[0], 4, 0};
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 2), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "ops[1]")) << message();
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, ops, 256), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(message(), "255")) << message();
    EXPECT_EQ(cucore_stream_batch_memory_ops(s0_, nullptr, 1), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(read32(dev_[0], 0), 0u);
}

TEST_F(MemoryOperationsTest, EveryDriverFailureIsReportedAndLeavesNothing) {
    expects_release_errors_ = true;
    write(dev_[0], 0, pattern(1024, 4));
    const cucore_copy_batch_item_t one = item(dev_[0], 0, dev_[1], 0, 64);
    const cucore_stream_memory_op_t op{CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_64, 0, dev_[1], 8, 3};
    cucore_copy_3d_t region = CUCORE_COPY_3D_INIT;
    region.src.buffer = dev_[0];
    region.src.pitch = 32;
    region.dst.buffer = dev_[1];
    region.dst.pitch = 32;
    region.width = 32;
    region.rows = 2;
    const cucore_copy_3d_t *strided[] = {&region};
    struct Path {
        const char *entry;
        std::function<cucore_status_t()> run;
    } paths[] = {
        {"cuMemcpyBatchAsync", [&] { return cucore_copy_batch(s0_, &one, 1, nullptr, 0); }},
        {"cuMemcpy3DBatchAsync", [&] { return cucore_copy_3d_batch(s0_, strided, 1, nullptr); }},
        {"cuMemPrefetchBatchAsync", [&] { return cucore_prefetch_batch(s0_, man_, 3, &kHost, 1); }},
        {"cuMemDiscardBatchAsync", [&] { return cucore_discard_batch(s0_, man_, 3); }},
        {"cuMemDiscardAndPrefetchBatchAsync", [&] { return cucore_discard_prefetch_batch(s0_, man_, 3, &kHost, 1); }},
        {"cuStreamWriteValue32", [&] { return cucore_stream_write_value_32(s0_, dev_[1], 0, 1u, 0); }},
        {"cuStreamWriteValue64", [&] { return cucore_stream_write_value_64(s0_, dev_[1], 0, 1u, 0); }},
        {"cuStreamWaitValue32", [&] { return cucore_stream_wait_value_32(s0_, dev_[1], 0, 0u, 0); }},
        {"cuStreamWaitValue64", [&] { return cucore_stream_wait_value_64(s0_, dev_[1], 0, 0u, 0); }},
        {"cuStreamBatchMemOp", [&] { return cucore_stream_batch_memory_ops(s0_, &op, 1); }},
        {"cuDeviceGetAttribute", [&] { return cucore_stream_write_value_64(s0_, dev_[1], 0, 1u, 0); }},
    };
    for (const Path &path : paths) {
        SCOPED_TRACE(path.entry);
        const size_t live_before = live(CUCORE_OBJECT_ANY);
        // Each call of the path fails in turn; the call that fails is named.
        for (long i = 1; i < 20; ++i) {
            const uint64_t errors_before = release_errors();
            fake::reset_calls();
            fake::fail_call(i, CUDA_ERROR_LAUNCH_FAILED);
            const cucore_status_t status = path.run();
            const std::vector<std::string> calls = fake::call_log();
            fake::fail_call(0);
            if (static_cast<long>(calls.size()) < i) {  // the path made fewer calls: all succeeded
                EXPECT_EQ(status, CUCORE_SUCCESS) << message();
                break;
            }
            if (status == CUCORE_SUCCESS) {  // a cleanup after the work (restoring the caller's context): reported
                EXPECT_EQ(release_errors(), errors_before + 1) << "failing call " << calls[i - 1];
                continue;
            }
            EXPECT_EQ(status, CUCORE_ERROR_CUDA) << "failing call " << calls[i - 1];
            EXPECT_TRUE(contains(message(), calls[i - 1].c_str())) << message();
            EXPECT_EQ(cucore_last_cuda_result(), static_cast<int>(CUDA_ERROR_LAUNCH_FAILED));
        }
        EXPECT_EQ(live(CUCORE_OBJECT_ANY), live_before);
        fake::fail_entry(path.entry, CUDA_ERROR_LAUNCH_FAILED);
        EXPECT_EQ(path.run(), CUCORE_ERROR_CUDA);
        EXPECT_TRUE(contains(message(), path.entry)) << message();
        fake::fail_entry("");
        ASSERT_EQ(cucore_stream_synchronize(s0_), CUCORE_SUCCESS);
    }
}

// ---- one stream waits on a value another writes (worker-thread streams, as on a device) ----

class MemoryOperationsWorkerTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::install(2, fake::Streams::worker_threads);
        d_ = device(0);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &a_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_stream_create(d_, nullptr, &b_), CUCORE_SUCCESS);
        ASSERT_EQ(cucore_device_memory_resource_get_default(d_, &pool_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        cucore_memory_resource_release(pool_);
        cucore_stream_release(b_);
        cucore_stream_release(a_);
        cucore_device_release(d_);
        fake::install(2);  // waits for the workers
        FakeDriverTest::TearDown();
    }
    cucore_buffer_t *alloc(uint64_t size, cucore_stream_t *s) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_memory_resource_allocate(pool_, size, s, &b), CUCORE_SUCCESS) << message();
        return b;
    }
    cucore_device_t *d_ = nullptr;
    cucore_stream_t *a_ = nullptr, *b_ = nullptr;
    cucore_memory_resource_t *pool_ = nullptr;
};

TEST_F(MemoryOperationsWorkerTest, AStreamWaitsForTheValueAnotherWritesLater) {
    cucore_buffer_t *flag = alloc(16, a_), *data = alloc(256, a_), *out = alloc(256, a_);
    ASSERT_EQ(cucore_buffer_fill(flag, 0, 4, a_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_fill(data, 0, 4, a_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(a_), CUCORE_SUCCESS);
    // A: wait for flag >= 1 (32-bit) and the 64-bit word >= 2, then copy data to out.
    ASSERT_EQ(cucore_stream_wait_value_32(a_, flag, 0, 1u, CUCORE_STREAM_WAIT_VALUE_GEQ), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_wait_value_64(a_, flag, 8, 2u, CUCORE_STREAM_WAIT_VALUE_GEQ), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_buffer_copy(out, data, a_), CUCORE_SUCCESS) << message();
    int done = -1;
    ASSERT_EQ(cucore_stream_query(a_, &done), CUCORE_SUCCESS);
    EXPECT_EQ(done, 0);  // held by the wait: nothing has written the flag
    // B: fill data, then write the flags.
    ASSERT_EQ(cucore_buffer_fill(data, 0x5A5A5A5Au, 4, b_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_write_value_32(b_, flag, 0, 1u, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_write_value_64(b_, flag, 8, 2u, 0), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_stream_synchronize(a_), CUCORE_SUCCESS);
    Bytes got(256, 0);
    ASSERT_EQ(cucore_buffer_copy_to_host(out, 0, got.data(), got.size(), a_), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_synchronize(a_), CUCORE_SUCCESS);
    EXPECT_EQ(got, Bytes(256, 0x5A));
    for (auto *b : {flag, data, out}) cucore_buffer_release(b);
    ASSERT_EQ(cucore_stream_synchronize(b_), CUCORE_SUCCESS);
}

}  // namespace
