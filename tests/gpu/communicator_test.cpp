// Collectives on two (or more) GPUs through NCCL, peer access, and IPC across
// devices. One process driving every GPU (cucore_communicator_create_all and
// groups), and one process per GPU (cucore_multi_gpu_child, with the clique id
// passed as hex on its command line). Every result is read back and compared
// with what the host computes. The tests skip, with the reason, on a machine
// with fewer than two GPUs or without NCCL; CUCORE_TEST_REQUIRE_NCCL=1 (set by
// scripts/gpu_suite.sh) turns a missing NCCL into a failure.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace {

using gpu::GpuTest;

std::string last_message() { return cucore_last_error_message(); }

// ---- Element codecs: values are small integers (and halves), exact in every type tested.

double decode_half(uint16_t h) {
    const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);
    return sign * std::ldexp(1024 + mantissa, exponent - 25);
}
uint16_t encode_half(double v) {  // exact for the test's values
    if (v == 0) return 0;
    const uint16_t sign = v < 0 ? 0x8000 : 0;
    v = std::fabs(v);
    int e = 0;
    const double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
    const int mantissa = static_cast<int>((m * 2 - 1) * 1024);
    return static_cast<uint16_t>(sign | ((e - 1 + 15) << 10) | mantissa);
}
// 8-bit floats: E4M3 (bias 7, 3 mantissa bits) and E5M2 (bias 15, 2 bits), positive values only here.
double decode_fp8(uint8_t b, int mantissa_bits, int bias) {
    const int exponent = (b & 0x7f) >> mantissa_bits, mantissa = b & ((1 << mantissa_bits) - 1);
    if (exponent == 0) return std::ldexp(mantissa, 1 - bias - mantissa_bits);
    return std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
}
uint8_t encode_fp8(double v, int mantissa_bits, int bias) {
    if (v == 0) return 0;
    int e = 0;
    const double m = std::frexp(v, &e);
    const int mantissa = static_cast<int>((m * 2 - 1) * (1 << mantissa_bits));
    return static_cast<uint8_t>(((e - 1 + bias) << mantissa_bits) | mantissa);
}

struct TypeCase {
    cucore_data_type_t type;
    const char *name;
    uint32_t size;
    bool integer;
    bool fp8;
};
const TypeCase kTypes[] = {
    {CUCORE_DATA_TYPE_INT8, "int8", 1, true, false},        {CUCORE_DATA_TYPE_UINT8, "uint8", 1, true, false},
    {CUCORE_DATA_TYPE_INT32, "int32", 4, true, false},      {CUCORE_DATA_TYPE_UINT32, "uint32", 4, true, false},
    {CUCORE_DATA_TYPE_INT64, "int64", 8, true, false},      {CUCORE_DATA_TYPE_UINT64, "uint64", 8, true, false},
    {CUCORE_DATA_TYPE_FLOAT16, "float16", 2, false, false}, {CUCORE_DATA_TYPE_FLOAT32, "float32", 4, false, false},
    {CUCORE_DATA_TYPE_FLOAT64, "float64", 8, false, false}, {CUCORE_DATA_TYPE_BFLOAT16, "bfloat16", 2, false, false},
    {CUCORE_DATA_TYPE_FLOAT8_E4M3, "float8_e4m3", 1, false, true},
    {CUCORE_DATA_TYPE_FLOAT8_E5M2, "float8_e5m2", 1, false, true},
};

void encode(const TypeCase &t, double v, uint8_t *out) {
    switch (t.type) {
        case CUCORE_DATA_TYPE_INT8: *reinterpret_cast<int8_t *>(out) = static_cast<int8_t>(v); break;
        case CUCORE_DATA_TYPE_UINT8: *out = static_cast<uint8_t>(v); break;
        case CUCORE_DATA_TYPE_INT32: { int32_t x = static_cast<int32_t>(v); std::memcpy(out, &x, 4); break; }
        case CUCORE_DATA_TYPE_UINT32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(out, &x, 4); break; }
        case CUCORE_DATA_TYPE_INT64: { int64_t x = static_cast<int64_t>(v); std::memcpy(out, &x, 8); break; }
        case CUCORE_DATA_TYPE_UINT64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(out, &x, 8); break; }
        case CUCORE_DATA_TYPE_FLOAT16: { uint16_t x = encode_half(v); std::memcpy(out, &x, 2); break; }
        case CUCORE_DATA_TYPE_FLOAT32: { float x = static_cast<float>(v); std::memcpy(out, &x, 4); break; }
        case CUCORE_DATA_TYPE_FLOAT64: std::memcpy(out, &v, 8); break;
        case CUCORE_DATA_TYPE_BFLOAT16: {
            const float f = static_cast<float>(v);
            uint32_t bits = 0;
            std::memcpy(&bits, &f, 4);
            const uint16_t x = static_cast<uint16_t>(bits >> 16);  // exact: the low half is zero for these values
            std::memcpy(out, &x, 2);
            break;
        }
        case CUCORE_DATA_TYPE_FLOAT8_E4M3: *out = encode_fp8(v, 3, 7); break;
        case CUCORE_DATA_TYPE_FLOAT8_E5M2: *out = encode_fp8(v, 2, 15); break;
        default: break;
    }
}

double decode(const TypeCase &t, const uint8_t *in) {
    switch (t.type) {
        case CUCORE_DATA_TYPE_INT8: return *reinterpret_cast<const int8_t *>(in);
        case CUCORE_DATA_TYPE_UINT8: return *in;
        case CUCORE_DATA_TYPE_INT32: { int32_t x; std::memcpy(&x, in, 4); return x; }
        case CUCORE_DATA_TYPE_UINT32: { uint32_t x; std::memcpy(&x, in, 4); return x; }
        case CUCORE_DATA_TYPE_INT64: { int64_t x; std::memcpy(&x, in, 8); return static_cast<double>(x); }
        case CUCORE_DATA_TYPE_UINT64: { uint64_t x; std::memcpy(&x, in, 8); return static_cast<double>(x); }
        case CUCORE_DATA_TYPE_FLOAT16: { uint16_t x; std::memcpy(&x, in, 2); return decode_half(x); }
        case CUCORE_DATA_TYPE_FLOAT32: { float x; std::memcpy(&x, in, 4); return x; }
        case CUCORE_DATA_TYPE_FLOAT64: { double x; std::memcpy(&x, in, 8); return x; }
        case CUCORE_DATA_TYPE_BFLOAT16: {
            uint16_t x;
            std::memcpy(&x, in, 2);
            const uint32_t bits = static_cast<uint32_t>(x) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        }
        case CUCORE_DATA_TYPE_FLOAT8_E4M3: return decode_fp8(*in, 3, 7);
        case CUCORE_DATA_TYPE_FLOAT8_E5M2: return decode_fp8(*in, 2, 15);
        default: return NAN;
    }
}

// Rank r's element i: 1..4, so sums, products and averages of two ranks stay exact in every type.
double value(int rank, size_t i) { return static_cast<double>((i + static_cast<size_t>(rank)) % 3 + 1 + rank % 2); }

double reduce(cucore_reduce_op_t op, const std::vector<double> &xs, bool integer) {
    double r = xs[0];
    for (size_t k = 1; k < xs.size(); ++k) {
        switch (op) {
            case CUCORE_REDUCE_SUM:
            case CUCORE_REDUCE_AVG: r += xs[k]; break;
            case CUCORE_REDUCE_PROD: r *= xs[k]; break;
            case CUCORE_REDUCE_MAX: r = std::max(r, xs[k]); break;
            case CUCORE_REDUCE_MIN: r = std::min(r, xs[k]); break;
            default: break;
        }
    }
    if (op == CUCORE_REDUCE_AVG) r = integer ? std::floor(r / static_cast<double>(xs.size())) : r / static_cast<double>(xs.size());
    return r;
}

class CommunicatorGpuTest : public GpuTest {
  protected:
    // One communicator per GPU for the whole suite, made before the first test takes its baseline of live
    // objects: NCCL's initialisation takes seconds (tens under compute-sanitizer).
    static void SetUpTestSuite() {
        if (!gpu::cu().available) return;
        int n = 0, version = 0;
        if (cucore_device_count(&n) != CUCORE_SUCCESS || n < 2 ||
            cucore_communicator_library_version(&version) != CUCORE_SUCCESS) {
            cucore_clear_last_error();
            return;
        }
        std::vector<cucore_device_t *> devices(static_cast<size_t>(n), nullptr);
        for (int d = 0; d < n; ++d) (void)cucore_device_get(d, &devices[d]);
        shared_.assign(static_cast<size_t>(n), nullptr);
        if (cucore_communicator_create_all(devices.data(), devices.size(), shared_.data()) != CUCORE_SUCCESS) {
            shared_failure_ = cucore_last_error_message();
            shared_.clear();
        }
        for (cucore_device_t *d : devices) cucore_device_release(d);
    }
    static void TearDownTestSuite() {
        for (cucore_communicator_t *c : shared_) cucore_communicator_release(c);
        shared_.clear();
    }

    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        if (device_count_ < 2) GTEST_SKIP() << "needs 2 GPUs; " << device_count_ << " present";
        int version = 0;
        const cucore_status_t st = cucore_communicator_library_version(&version);
        if (st == CUCORE_ERROR_NOT_SUPPORTED) {
            const char *required = std::getenv("CUCORE_TEST_REQUIRE_NCCL");
            if (required && *required == '1') FAIL() << "NCCL is required here: " << cucore_last_error_message();
            GTEST_SKIP() << "no NCCL: " << cucore_last_error_message();
        }
        CUCORE_ASSERT_OK(st);
        nccl_version_ = version;
        ranks_ = device_count_;
        for (int d = 0; d < ranks_; ++d) {
            cucore_device_t *dev = nullptr;
            CUCORE_ASSERT_OK(cucore_device_get(d, &dev));
            devices_.push_back(dev);
            cucore_stream_t *s = nullptr;
            CUCORE_ASSERT_OK(cucore_stream_create(dev, nullptr, &s));
            streams_.push_back(s);
        }
        ASSERT_EQ(shared_.size(), static_cast<size_t>(ranks_)) << "no communicators: " << shared_failure_;
        comms_ = shared_;
    }
    void TearDown() override {
        for (cucore_stream_t *s : streams_) (void)cucore_stream_synchronize(s);
        for (cucore_stream_t *s : streams_) cucore_stream_release(s);
        for (cucore_device_t *d : devices_) cucore_device_release(d);
        GpuTest::TearDown();
    }

    cucore_buffer_t *allocate(int rank, size_t bytes) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(devices_[rank], bytes, streams_[rank], &b), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return b;
    }
    cucore_buffer_t *upload(int rank, const std::vector<uint8_t> &bytes) {
        cucore_buffer_t *b = allocate(rank, bytes.size());
        if (b) {
            EXPECT_EQ(cucore_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), streams_[rank]), CUCORE_SUCCESS);
        }
        return b;
    }
    std::vector<uint8_t> download(int rank, cucore_buffer_t *b) {
        uint64_t size = 0;
        EXPECT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
        std::vector<uint8_t> bytes(size, 0xEE);
        EXPECT_EQ(cucore_buffer_copy_to_host(b, 0, bytes.data(), size, streams_[rank]), CUCORE_SUCCESS)
            << cucore_last_error_message();
        EXPECT_EQ(cucore_stream_synchronize(streams_[rank]), CUCORE_SUCCESS) << cucore_last_error_message();
        return bytes;
    }
    std::vector<uint8_t> encoded(const TypeCase &t, int rank, size_t count, size_t offset = 0) {
        std::vector<uint8_t> bytes(count * t.size);
        for (size_t i = 0; i < count; ++i) encode(t, value(rank, i + offset), &bytes[i * t.size]);
        return bytes;
    }
    void release_all(std::vector<cucore_buffer_t *> &buffers) {
        for (cucore_buffer_t *&b : buffers) {
            cucore_buffer_release(b);
            b = nullptr;
        }
    }

    int nccl_version_ = 0;
    int ranks_ = 0;
    std::vector<cucore_device_t *> devices_;
    std::vector<cucore_stream_t *> streams_;
    std::vector<cucore_communicator_t *> comms_;  // the suite's (shared_)
    static std::vector<cucore_communicator_t *> shared_;
    static std::string shared_failure_;
};
std::vector<cucore_communicator_t *> CommunicatorGpuTest::shared_;
std::string CommunicatorGpuTest::shared_failure_;

TEST_F(CommunicatorGpuTest, CreateAllGivesOneRankPerDevice) {
    EXPECT_GE(nccl_version_, 20700);
    for (int r = 0; r < ranks_; ++r) {
        int rank = -1, count = -1, ordinal = -1;
        CUCORE_EXPECT_OK(cucore_communicator_rank(comms_[r], &rank));
        CUCORE_EXPECT_OK(cucore_communicator_rank_count(comms_[r], &count));
        cucore_device_t *dev = nullptr;
        CUCORE_EXPECT_OK(cucore_communicator_device(comms_[r], &dev));
        CUCORE_EXPECT_OK(cucore_device_ordinal(dev, &ordinal));
        cucore_device_release(dev);
        EXPECT_EQ(rank, r);
        EXPECT_EQ(count, ranks_);
        EXPECT_EQ(ordinal, r);
        void *nccl = nullptr;
        CUCORE_EXPECT_OK(cucore_communicator_handle(comms_[r], &nccl));
        EXPECT_NE(nccl, nullptr);
        CUCORE_EXPECT_OK(cucore_communicator_check(comms_[r]));
    }
}

// Every data type under every reduction it supports, all ranks driven from this thread in one group.
TEST_F(CommunicatorGpuTest, AllReduceEveryTypeAndReduction) {
    const size_t count = 1000;
    for (const TypeCase &t : kTypes) {
        if (t.fp8 && nccl_version_ < 22400) continue;
        for (cucore_reduce_op_t op : {CUCORE_REDUCE_SUM, CUCORE_REDUCE_PROD, CUCORE_REDUCE_MAX, CUCORE_REDUCE_MIN,
                                      CUCORE_REDUCE_AVG}) {
            // 8-bit floats: products and averages of these values are not all exact in 2-3 mantissa bits.
            if (t.fp8 && (op == CUCORE_REDUCE_PROD || op == CUCORE_REDUCE_AVG)) continue;
            SCOPED_TRACE(std::string(t.name) + " op " + std::to_string(op));
            std::vector<cucore_buffer_t *> send(ranks_), recv(ranks_);
            for (int r = 0; r < ranks_; ++r) {
                send[r] = upload(r, encoded(t, r, count));
                recv[r] = allocate(r, count * t.size);
            }
            CUCORE_ASSERT_OK(cucore_communicator_group_start());
            EXPECT_EQ(cucore_communicator_group_depth(), 1);
            for (int r = 0; r < ranks_; ++r)
                CUCORE_EXPECT_OK(cucore_communicator_all_reduce(comms_[r], send[r], recv[r], 0, t.type, op, streams_[r]));
            CUCORE_ASSERT_OK(cucore_communicator_group_end());
            EXPECT_EQ(cucore_communicator_group_depth(), 0);
            for (int r = 0; r < ranks_; ++r) {
                const std::vector<uint8_t> got = download(r, recv[r]);
                size_t bad = count;
                double expected = 0, seen = 0;
                for (size_t i = 0; i < count && bad == count; ++i) {
                    std::vector<double> xs;
                    for (int k = 0; k < ranks_; ++k) xs.push_back(value(k, i));
                    expected = reduce(op, xs, t.integer);
                    seen = decode(t, &got[i * t.size]);
                    if (seen != expected) bad = i;
                }
                EXPECT_EQ(bad, count) << "rank " << r << " element " << bad << ": " << seen << ", expected " << expected;
            }
            release_all(send);
            release_all(recv);
        }
    }
}

TEST_F(CommunicatorGpuTest, GatherScatterBroadcastReduceAndSendRecv) {
    const TypeCase &t = kTypes[7];  // float32
    ASSERT_EQ(t.type, CUCORE_DATA_TYPE_FLOAT32);
    const size_t count = 4096;
    const size_t n = static_cast<size_t>(ranks_);
    std::vector<cucore_buffer_t *> send(ranks_), recv(ranks_), big(ranks_);

    // All-gather: rank r's block lands at r * count on every rank.
    for (int r = 0; r < ranks_; ++r) {
        send[r] = upload(r, encoded(t, r, count));
        big[r] = allocate(r, n * count * t.size);
    }
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r)
        CUCORE_EXPECT_OK(cucore_communicator_all_gather(comms_[r], send[r], big[r], 0, t.type, streams_[r]));
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    for (int r = 0; r < ranks_; ++r) {
        const std::vector<uint8_t> got = download(r, big[r]);
        for (size_t j = 0; j < n * count; ++j)
            ASSERT_EQ(decode(t, &got[j * t.size]), value(static_cast<int>(j / count), j % count)) << "rank " << r << " " << j;
    }

    // Reduce-scatter: rank r keeps block r of the sum of everyone's n * count elements.
    for (int r = 0; r < ranks_; ++r) {
        cucore_buffer_release(big[r]);
        big[r] = upload(r, encoded(t, r, n * count));
    }
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r)
        CUCORE_EXPECT_OK(cucore_communicator_reduce_scatter(comms_[r], big[r], send[r], 0, t.type, CUCORE_REDUCE_SUM,
                                                            streams_[r]));
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    for (int r = 0; r < ranks_; ++r) {
        const std::vector<uint8_t> got = download(r, send[r]);
        for (size_t i = 0; i < count; ++i) {
            double expected = 0;
            for (int k = 0; k < ranks_; ++k) expected += value(k, static_cast<size_t>(r) * count + i);
            ASSERT_EQ(decode(t, &got[i * t.size]), expected) << "rank " << r << " " << i;
        }
    }

    // Broadcast from the last rank; only the root names a send buffer.
    const int root = ranks_ - 1;
    for (int r = 0; r < ranks_; ++r) {
        cucore_buffer_release(send[r]);
        send[r] = upload(r, encoded(t, r, count));
        recv[r] = allocate(r, count * t.size);
    }
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r)
        CUCORE_EXPECT_OK(cucore_communicator_broadcast(comms_[r], r == root ? send[r] : nullptr, recv[r], 0, t.type,
                                                       root, streams_[r]));
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    for (int r = 0; r < ranks_; ++r) EXPECT_EQ(download(r, recv[r]), encoded(t, root, count)) << "rank " << r;

    // Reduce to rank 0 (max); the other ranks name no receive buffer, and theirs stays untouched.
    for (int r = 0; r < ranks_; ++r) CUCORE_ASSERT_OK(cucore_buffer_fill(recv[r], 0, 1, streams_[r]));
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r)
        CUCORE_EXPECT_OK(cucore_communicator_reduce(comms_[r], send[r], r == 0 ? recv[r] : nullptr, 0, t.type,
                                                    CUCORE_REDUCE_MAX, 0, streams_[r]));
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    {
        const std::vector<uint8_t> got = download(0, recv[0]);
        for (size_t i = 0; i < count; ++i) {
            double expected = value(0, i);
            for (int k = 1; k < ranks_; ++k) expected = std::max(expected, value(k, i));
            ASSERT_EQ(decode(t, &got[i * t.size]), expected) << i;
        }
        for (int r = 1; r < ranks_; ++r) EXPECT_EQ(download(r, recv[r]), std::vector<uint8_t>(count * t.size, 0));
    }

    // Send / receive around the ring: rank r sends to r + 1 and receives from r - 1.
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r) {
        CUCORE_EXPECT_OK(cucore_communicator_send(comms_[r], send[r], 0, t.type, (r + 1) % ranks_, streams_[r]));
        CUCORE_EXPECT_OK(cucore_communicator_recv(comms_[r], recv[r], 0, t.type, (r + ranks_ - 1) % ranks_, streams_[r]));
    }
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    for (int r = 0; r < ranks_; ++r)
        EXPECT_EQ(download(r, recv[r]), encoded(t, (r + ranks_ - 1) % ranks_, count)) << "rank " << r;

    release_all(send);
    release_all(recv);
    release_all(big);
}

// In place, with an explicit count smaller than the buffers (the tail stays as it was).
TEST_F(CommunicatorGpuTest, InPlaceAllReduceOfAPrefix) {
    const TypeCase &t = kTypes[2];  // int32
    const size_t count = 3000, used = 1000;
    std::vector<cucore_buffer_t *> buf(ranks_);
    for (int r = 0; r < ranks_; ++r) buf[r] = upload(r, encoded(t, r, count));
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r)
        CUCORE_EXPECT_OK(cucore_communicator_all_reduce(comms_[r], buf[r], buf[r], used, t.type, CUCORE_REDUCE_SUM,
                                                        streams_[r]));
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    for (int r = 0; r < ranks_; ++r) {
        const std::vector<uint8_t> got = download(r, buf[r]);
        for (size_t i = 0; i < count; ++i) {
            double expected = value(r, i);
            if (i < used) {
                expected = 0;
                for (int k = 0; k < ranks_; ++k) expected += value(k, i);
            }
            ASSERT_EQ(decode(t, &got[i * t.size]), expected) << "rank " << r << " " << i;
        }
    }
    release_all(buf);
}

// What the library refuses before NCCL sees it.
TEST_F(CommunicatorGpuTest, RefusesMismatchedSizesAndForeignDevices) {
    cucore_buffer_t *a = allocate(0, 4096), *b = allocate(0, 2048), *other = allocate(1, 4096);
    CUCORE_EXPECT_STATUS(cucore_communicator_all_reduce(comms_[0], a, b, 0, CUCORE_DATA_TYPE_FLOAT32,
                                                        CUCORE_REDUCE_SUM, streams_[0]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find("mismatched sizes"), std::string::npos) << last_message();
    CUCORE_EXPECT_STATUS(cucore_communicator_all_reduce(comms_[0], a, a, 2000, CUCORE_DATA_TYPE_FLOAT32,
                                                        CUCORE_REDUCE_SUM, streams_[0]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_communicator_all_reduce(comms_[0], other, other, 0, CUCORE_DATA_TYPE_FLOAT32,
                                                        CUCORE_REDUCE_SUM, streams_[0]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find("device 1"), std::string::npos) << last_message();
    CUCORE_EXPECT_STATUS(cucore_communicator_all_reduce(comms_[0], a, a, 0, CUCORE_DATA_TYPE_FLOAT32,
                                                        CUCORE_REDUCE_SUM, streams_[1]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find("stream"), std::string::npos) << last_message();
    CUCORE_EXPECT_STATUS(cucore_communicator_broadcast(comms_[0], a, a, 0, CUCORE_DATA_TYPE_FLOAT32, ranks_,
                                                       streams_[0]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_communicator_all_reduce(comms_[0], a, a, 0, CUCORE_DATA_TYPE_UNSET,
                                                        CUCORE_REDUCE_SUM, streams_[0]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_communicator_group_end(), CUCORE_ERROR_INVALID_STATE);
    // Nothing was enqueued: the communicators still work.
    for (int r = 0; r < ranks_; ++r) CUCORE_EXPECT_OK(cucore_communicator_check(comms_[r]));
    cucore_buffer_release(a);
    cucore_buffer_release(b);
    cucore_buffer_release(other);
}

// Everything the operation uses may be released right after the call, and the results still arrive. (What checks
// the holds themselves is deterministic only on the fake driver: communicator_test.cpp's
// HandlesReleasedRightAfterEnqueueing... and graph_attachments_test.cpp count the held objects while the work
// waits. Here the buffers' frees are ordered after the operation on the same stream anyway.)
TEST_F(CommunicatorGpuTest, HandlesMayGoRightAfterTheCall) {
    const TypeCase &t = kTypes[7];  // float32
    const size_t count = size_t{16} << 20;  // 64 MiB per rank: still running when the handles go
    std::vector<cucore_buffer_t *> send(ranks_), recv(ranks_), keep(ranks_);
    std::vector<cucore_communicator_t *> own(static_cast<size_t>(ranks_), nullptr);  // released below, mid-flight
    CUCORE_ASSERT_OK(cucore_communicator_create_all(devices_.data(), devices_.size(), own.data()));
    for (int r = 0; r < ranks_; ++r) {
        send[r] = allocate(r, count * t.size);
        CUCORE_ASSERT_OK(cucore_buffer_fill(send[r], 0x3f800000u + (static_cast<uint32_t>(r) << 23), 4,
                                            streams_[r]));  // 1.0f, 2.0f, 4.0f, ...
        recv[r] = allocate(r, count * t.size);
        CUCORE_ASSERT_OK(cucore_buffer_view(recv[r], 0, 4096, &keep[r]));  // reads the result afterwards
    }
    CUCORE_ASSERT_OK(cucore_communicator_group_start());
    for (int r = 0; r < ranks_; ++r)
        CUCORE_EXPECT_OK(cucore_communicator_all_reduce(own[r], send[r], recv[r], 0, t.type, CUCORE_REDUCE_SUM,
                                                        streams_[r]));
    release_all(send);  // inside the group: not yet handed to NCCL
    CUCORE_ASSERT_OK(cucore_communicator_group_end());
    release_all(recv);
    for (cucore_communicator_t *c : own) cucore_communicator_release(c);
    double expected = 0;
    for (int r = 0; r < ranks_; ++r) expected += std::ldexp(1.0, r);
    for (int r = 0; r < ranks_; ++r) {
        const std::vector<uint8_t> got = download(r, keep[r]);
        for (size_t i = 0; i < got.size() / 4; ++i) ASSERT_EQ(decode(t, &got[i * 4]), expected) << i;
    }
    release_all(keep);
}

TEST_F(CommunicatorGpuTest, OneProcessPerGpu) {
    cucore_communicator_id_t id;
    CUCORE_ASSERT_OK(cucore_communicator_id_create(&id));
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (char c : id.internal) {
        hex += digits[static_cast<uint8_t>(c) >> 4];
        hex += digits[static_cast<uint8_t>(c) & 15];
    }
    const std::string helper = gpu::helper_path("cucore_multi_gpu_child");
    ASSERT_EQ(access(helper.c_str(), X_OK), 0) << helper << " is missing (it is built beside this binary)";
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // inherited: NVLink multicast stays off
    std::vector<gpu::Child> children(static_cast<size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r)
        ASSERT_EQ(children[r].start(helper, {"nccl", std::to_string(ranks_), std::to_string(r), std::to_string(r), hex,
                                             std::to_string(1 << 20)},
                                    -1, std::chrono::seconds{120}),
                  "");
    for (int r = 0; r < ranks_; ++r) {
        const int status = children[r].finish();
        EXPECT_FALSE(children[r].timed_out()) << "rank " << r << " hung\n" << children[r].transcript();
        EXPECT_EQ(status, 0) << children[r].transcript();
        for (const char *step : {"ok create", "ok all_reduce", "ok all_gather", "ok broadcast", "ok check", "done 0"})
            EXPECT_TRUE(children[r].said(step)) << "rank " << r << " missing \"" << step << "\"\n"
                                                << children[r].transcript();
    }
}

// Peer copies of buffers both ways (device 0 -> 1 and back), with and without peer access.
TEST_F(CommunicatorGpuTest, PeerCopiesBothWays) {
    const size_t size = size_t{8} << 20;
    std::vector<uint8_t> pattern(size);
    for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 13 + (i >> 10));
    cucore_buffer_t *a = upload(0, pattern), *b = allocate(1, size), *c = allocate(0, size);
    CUCORE_ASSERT_OK(cucore_stream_synchronize(streams_[0]));
    CUCORE_ASSERT_OK(cucore_buffer_copy(b, a, streams_[1]));
    CUCORE_ASSERT_OK(cucore_buffer_copy(c, b, streams_[1]));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(streams_[1]));
    EXPECT_EQ(download(0, c), pattern);
    int can = 0;
    CUCORE_ASSERT_OK(cucore_device_can_access_peer(devices_[1], devices_[0], &can));
    if (can) {
        CUCORE_ASSERT_OK(cucore_device_enable_peer_access(devices_[1], devices_[0]));
        CUCORE_ASSERT_OK(cucore_device_enable_peer_access(devices_[1], devices_[0]));  // twice: no error
        CUCORE_ASSERT_OK(cucore_buffer_fill(c, 0, 1, streams_[0]));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(streams_[0]));
        CUCORE_ASSERT_OK(cucore_buffer_copy(c, b, streams_[1]));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(streams_[1]));
        EXPECT_EQ(download(0, c), pattern);
        CUCORE_EXPECT_OK(cucore_device_disable_peer_access(devices_[1], devices_[0]));
        CUCORE_EXPECT_STATUS(cucore_device_disable_peer_access(devices_[1], devices_[0]), CUCORE_ERROR_INVALID_STATE);
    }
    CUCORE_EXPECT_STATUS(cucore_device_enable_peer_access(devices_[0], devices_[0]), CUCORE_ERROR_INVALID_ARGUMENT);
    // Host copies of a device's memory run on its own streams: the driver cannot do them on another device's.
    std::vector<uint8_t> host(size);
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_to_host(a, 0, host.data(), size, streams_[1]), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find("device 0"), std::string::npos) << last_message();
    CUCORE_EXPECT_STATUS(cucore_buffer_copy_from_host(a, 0, host.data(), size, streams_[1]),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_buffer_release(a);
    cucore_buffer_release(b);
    cucore_buffer_release(c);
}

// A pool exported by this process on device 0, imported by a process that works on device 1.
TEST_F(CommunicatorGpuTest, IpcPoolOfDevice0UsedByAProcessOnDevice1) {
    int can = 0;
    CUCORE_ASSERT_OK(cucore_device_can_access_peer(devices_[1], devices_[0], &can));
    if (!can) GTEST_SKIP() << "device 1 cannot access device 0's memory";
    cucore_device_memory_resource_options_t o = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    o.ipc_enabled = 1;
    cucore_memory_resource_t *mr = nullptr;
    const cucore_status_t made = cucore_device_memory_resource_create(devices_[0], &o, &mr);
    if (made == CUCORE_ERROR_NOT_SUPPORTED) GTEST_SKIP() << "no IPC pools: " << cucore_last_error_message();
    CUCORE_ASSERT_OK(made);
    const size_t size = size_t{1} << 20;
    const unsigned seed = 9, fill = 0x5A;
    std::vector<uint8_t> pattern(size);
    for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 31u + seed * 7u + (i >> 8));
    cucore_buffer_t *b = nullptr;
    CUCORE_ASSERT_OK(cucore_memory_resource_allocate(mr, size, streams_[0], &b));
    CUCORE_ASSERT_OK(cucore_buffer_copy_from_host(b, 0, pattern.data(), size, streams_[0]));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(streams_[0]));
    cucore_ipc_pool_handle_t h{};
    CUCORE_ASSERT_OK(cucore_ipc_export_memory_resource(mr, &h));
    uint8_t descriptor[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE];
    CUCORE_ASSERT_OK(cucore_ipc_export_buffer(b, descriptor));
    static const char digits[] = "0123456789abcdef";
    auto hex = [&](const uint8_t *p, size_t n) {
        std::string s;
        for (size_t i = 0; i < n; ++i) {
            s += digits[p[i] >> 4];
            s += digits[p[i] & 15];
        }
        return s;
    };
    gpu::Child child;
    ASSERT_EQ(child.start(gpu::helper_path("cucore_multi_gpu_child"),
                          {"ipc_peer", std::to_string(gpu::kChildInheritedFd), hex(h.pool_id, sizeof h.pool_id),
                           hex(descriptor, sizeof descriptor), std::to_string(size), std::to_string(seed),
                           std::to_string(fill)},
                          h.fd),
              "");
    const int status = child.finish();
    EXPECT_FALSE(child.timed_out()) << child.transcript();
    EXPECT_EQ(status, 0) << child.transcript();
    for (const char *step : {"ok import_and_grant", "ok read_on_device_1", "ok write_on_device_1", "done 0"})
        EXPECT_TRUE(child.said(step)) << "missing \"" << step << "\"\n" << child.transcript();
    EXPECT_EQ(download(0, b), std::vector<uint8_t>(size, static_cast<uint8_t>(fill)))
        << "device 1's write in the other process";
    close(h.fd);
    cucore_buffer_release(b);
    CUCORE_EXPECT_OK(cucore_stream_synchronize(streams_[0]));
    cucore_memory_resource_release(mr);
}

}  // namespace
