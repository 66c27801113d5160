// Arrays and textures: array create + destroy, texture object create + destroy, and whole-array
// copies between an array and a buffer of 64 MiB, each way.
//
// Each variant does the same work through its own API:
//   raw    cuArray3DCreate + cuArrayDestroy; cuTexObjectCreate + cuTexObjectDestroy over one array;
//          cuMemcpy3DAsync between device memory from the device's current pool
//          (cuMemAllocFromPoolAsync) and an array, on a stream made with
//          cuStreamCreateWithPriority(CU_STREAM_NON_BLOCKING, 0);
//   C ABI  cucore_opaque_array_create + cucore_opaque_array_release; cucore_texture_object_create +
//          cucore_texture_object_release over one array; cucore_opaque_array_copy_from_buffer /
//          _copy_to_buffer with a buffer of the device's default pool, on a stream with cucore's
//          defaults;
//   C++    the same through cucore::OpaqueArray, cucore::TextureObject (destroyed at the end of each
//          iteration) and OpaqueArray::copy_from / copy_to(Buffer).
// libcucore calls exactly those driver entry points, with the same descriptions: the arrays are
// 2D, 256 x 256 elements of FLOAT32 x 4 (1 MiB) for the create rows and 2048 x 2048 (64 MiB) for
// the copies; the texture object reads its array with cucore's defaults (clamp in every dimension,
// point filtering, no flags: CU_TR_ADDRESS_MODE_CLAMP, CU_TR_FILTER_MODE_POINT, flags 0); the copies
// move rows of 2048 x 16 bytes packed (pitch = row size), as the whole-array copies do.
//
// The create rows are host time per create + destroy pair, as event create + destroy is. The
// copies are timed until their data has landed, as buffer_bench.cpp's copies are: the stream is
// synchronized inside the timed loop every kCopySyncEvery copies (256 MiB) and after the last, so
// a repetition's time per copy is the throughput of back-to-back copies; GB/s counts read + write
// bytes (128 MiB per copy), as the anchors count device-to-device copies.
//
// Checks, outside the timing: the C ABI and C++ create loops leave the live array and texture
// object counts where they were; before each copy loop the source gets a fresh 32-bit pattern, and
// after it the first and the last word of the copy's destination (read through a buffer for an
// array) must hold it.

#include <cstdint>
#include <cstring>
#include <string>

#include "bench_common.hpp"

namespace cucore_bench {
namespace {

constexpr std::uint64_t kCreateSide = 256;    // 256 x 256 x 16 B = 1 MiB
constexpr std::uint64_t kCopySide = 2048;     // 2048 x 2048 x 16 B = 64 MiB
constexpr std::uint64_t kElementBytes = 16;   // FLOAT32 x 4
constexpr std::uint64_t kCopyBytes = kCopySide * kCopySide * kElementBytes;
constexpr long long kCopySyncEvery = 4;       // 256 MiB of copies between timed synchronizations

// The anchors' bound on copy bandwidth (>= 0.98x raw), as a bound on time per copy.
constexpr double kBandwidthRatio = 0.98;

std::uint32_t next_pattern() {
    static std::uint32_t counter = 0;
    return 0xA0000000u | (++counter & 0x0FFFFFFFu);
}

CUDA_ARRAY3D_DESCRIPTOR raw_descriptor(std::uint64_t side) {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = static_cast<size_t>(side);
    d.Height = static_cast<size_t>(side);
    d.Depth = 0;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 4;
    d.Flags = 0;
    return d;
}

cucore_opaque_array_options_t c_options(std::uint64_t side) {
    cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
    o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    o.num_channels = 4;
    o.width = side;
    o.height = side;
    return o;
}

cucore::OpaqueArrayOptions cpp_options(std::uint64_t side) {
    cucore::OpaqueArrayOptions o;
    o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    o.num_channels = 4;
    o.width = side;
    o.height = side;
    return o;
}

// ---- array create + destroy ----------------------------------------------------------------------

void array_create_destroy_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    const CUDA_ARRAY3D_DESCRIPTOR desc = raw_descriptor(kCreateSide);
    for (auto _ : state) {
        CUarray array = nullptr;
        if (!ok(state, d.cuArray3DCreate_fn(&array, &desc), "cuArray3DCreate")) return;
        if (!ok(state, d.cuArrayDestroy_fn(array), "cuArrayDestroy")) return;
    }
}

void array_create_destroy_c(benchmark::State &state) {
    cucore_device_t *device = env().device;
    const cucore_opaque_array_options_t options = c_options(kCreateSide);
    const long long before = live_objects(CUCORE_OBJECT_OPAQUE_ARRAY);
    for (auto _ : state) {
        cucore_opaque_array_t *array = nullptr;
        if (!ok(state, cucore_opaque_array_create(device, &options, &array), "cucore_opaque_array_create")) return;
        if (!ok(state, cucore_opaque_array_release(array), "cucore_opaque_array_release")) return;
    }
    if (live_objects(CUCORE_OBJECT_OPAQUE_ARRAY) != before) fail_check(state, "live array count changed (a leak)");
}

void array_create_destroy_cpp(benchmark::State &state) {
    try {
        const cucore::Device &device = *env().cpp_device;
        const cucore::OpaqueArrayOptions options = cpp_options(kCreateSide);
        const long long before = live_objects(CUCORE_OBJECT_OPAQUE_ARRAY);
        for (auto _ : state) {
            cucore::OpaqueArray array = device.create_opaque_array(options);  // destroyed at the end of the iteration
        }
        if (live_objects(CUCORE_OBJECT_OPAQUE_ARRAY) != before) fail_check(state, "live array count changed (a leak)");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- texture object create + destroy ---------------------------------------------------------------

void texture_create_destroy_raw(benchmark::State &state) {
    const RawDriver &d = env().driver;
    const CUDA_ARRAY3D_DESCRIPTOR desc = raw_descriptor(kCreateSide);
    CUarray array = nullptr;
    if (!ok(state, d.cuArray3DCreate_fn(&array, &desc), "cuArray3DCreate")) return;
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    CUDA_TEXTURE_DESC texture{};
    for (int i = 0; i < 3; ++i) texture.addressMode[i] = CU_TR_ADDRESS_MODE_CLAMP;
    texture.filterMode = CU_TR_FILTER_MODE_POINT;
    texture.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
    for (auto _ : state) {
        CUtexObject object = 0;
        if (!ok(state, d.cuTexObjectCreate_fn(&object, &resource, &texture, nullptr), "cuTexObjectCreate")) break;
        if (!ok(state, d.cuTexObjectDestroy_fn(object), "cuTexObjectDestroy")) break;
    }
    d.cuArrayDestroy_fn(array);
}

void texture_create_destroy_c(benchmark::State &state) {
    cucore_device_t *device = env().device;
    const cucore_opaque_array_options_t options = c_options(kCreateSide);
    cucore_opaque_array_t *array = nullptr;
    if (!ok(state, cucore_opaque_array_create(device, &options, &array), "cucore_opaque_array_create")) return;
    cucore_resource_descriptor_t resource = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    resource.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
    resource.array = array;
    const long long before = live_objects(CUCORE_OBJECT_TEXTURE_OBJECT);
    for (auto _ : state) {
        cucore_texture_object_t *texture = nullptr;
        if (!ok(state, cucore_texture_object_create(nullptr, &resource, nullptr, &texture),
                "cucore_texture_object_create"))
            break;
        if (!ok(state, cucore_texture_object_release(texture), "cucore_texture_object_release")) break;
    }
    if (!state.error_occurred() && live_objects(CUCORE_OBJECT_TEXTURE_OBJECT) != before)
        fail_check(state, "live texture object count changed (a leak)");
    cucore_opaque_array_release(array);
}

void texture_create_destroy_cpp(benchmark::State &state) {
    try {
        const cucore::Device &device = *env().cpp_device;
        const cucore::ResourceDescriptor resource =
            cucore::ResourceDescriptor::from_opaque_array(device.create_opaque_array(cpp_options(kCreateSide)));
        const long long before = live_objects(CUCORE_OBJECT_TEXTURE_OBJECT);
        for (auto _ : state) {
            cucore::TextureObject texture = cucore::TextureObject::create(resource);  // destroyed each iteration
        }
        if (live_objects(CUCORE_OBJECT_TEXTURE_OBJECT) != before)
            fail_check(state, "live texture object count changed (a leak)");
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// ---- array <-> buffer, 64 MiB ----------------------------------------------------------------------
// Each variant keeps for the run: a stream, one 64 MiB buffer of the device's pool and one 64 MiB
// array, made on first use and freed at tear-down. copy(into_array) queues one whole-array copy;
// fill_words/read_word serve the checks.

class Raw {
public:
    bool start(benchmark::State &state) {
        d_ = &env().driver;
        CUmemoryPool pool = nullptr;
        const CUDA_ARRAY3D_DESCRIPTOR desc = raw_descriptor(kCopySide);
        if (!ok(state, d_->cuDeviceGetMemPool_fn(&pool, env().cu_device), "cuDeviceGetMemPool") ||
            !ok(state, d_->cuStreamCreateWithPriority_fn(&stream_, CU_STREAM_NON_BLOCKING, 0),
                "cuStreamCreateWithPriority") ||
            !ok(state, d_->cuMemAllocFromPoolAsync_fn(&buffer_, kCopyBytes, pool, stream_), "cuMemAllocFromPoolAsync") ||
            !ok(state, d_->cuStreamSynchronize_fn(stream_), "cuStreamSynchronize") ||
            !ok(state, d_->cuArray3DCreate_fn(&array_, &desc), "cuArray3DCreate")) {
            stop();
            return false;
        }
        to_array_ = params(true);
        from_array_ = params(false);
        return true;
    }
    void stop() {
        if (stream_ != nullptr) d_->cuStreamSynchronize_fn(stream_);
        if (buffer_ != 0) d_->cuMemFreeAsync_fn(buffer_, stream_);
        if (stream_ != nullptr) d_->cuStreamSynchronize_fn(stream_);
        if (array_ != nullptr) d_->cuArrayDestroy_fn(array_);
        if (stream_ != nullptr) d_->cuStreamDestroy_fn(stream_);
        buffer_ = 0;
        array_ = nullptr;
        stream_ = nullptr;
    }
    bool copy(benchmark::State &state, bool into_array) {
        return ok(state, d_->cuMemcpy3DAsync_fn(into_array ? &to_array_ : &from_array_, stream_), "cuMemcpy3DAsync");
    }
    bool sync(benchmark::State &state) { return ok(state, d_->cuStreamSynchronize_fn(stream_), "cuStreamSynchronize"); }
    bool fill_words(benchmark::State &state, std::uint32_t value) {
        return ok(state, d_->cuMemsetD32Async_fn(buffer_, value, kCopyBytes / 4, stream_), "cuMemsetD32Async") &&
               sync(state);
    }
    bool read_word(benchmark::State &state, std::uint64_t offset, std::uint32_t *word) {
        return ok(state, d_->cuMemcpyAsync_fn(reinterpret_cast<CUdeviceptr>(word), buffer_ + offset, 4, stream_),
                  "cuMemcpyAsync") &&
               sync(state);
    }

private:
    CUDA_MEMCPY3D params(bool into_array) const {
        CUDA_MEMCPY3D p{};
        if (into_array) {
            p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
            p.srcDevice = buffer_;
            p.srcPitch = static_cast<size_t>(kCopySide * kElementBytes);
            p.srcHeight = static_cast<size_t>(kCopySide);
            p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
            p.dstArray = array_;
        } else {
            p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
            p.srcArray = array_;
            p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
            p.dstDevice = buffer_;
            p.dstPitch = static_cast<size_t>(kCopySide * kElementBytes);
            p.dstHeight = static_cast<size_t>(kCopySide);
        }
        p.WidthInBytes = static_cast<size_t>(kCopySide * kElementBytes);
        p.Height = static_cast<size_t>(kCopySide);
        p.Depth = 1;
        return p;
    }

    const RawDriver *d_ = nullptr;
    CUstream stream_ = nullptr;
    CUdeviceptr buffer_ = 0;
    CUarray array_ = nullptr;
    CUDA_MEMCPY3D to_array_{}, from_array_{};
};

class CAbi {
public:
    bool start(benchmark::State &state) {
        cucore_device_t *device = env().device;
        const cucore_opaque_array_options_t options = c_options(kCopySide);
        if (ok(state, cucore_stream_create(device, nullptr, &stream_), "cucore_stream_create") &&
            ok(state, cucore_device_allocate(device, kCopyBytes, stream_, &buffer_), "cucore_device_allocate") &&
            ok(state, cucore_opaque_array_create(device, &options, &array_), "cucore_opaque_array_create"))
            return true;
        stop();
        return false;
    }
    void stop() {
        if (stream_ != nullptr) cucore_stream_synchronize(stream_);
        cucore_opaque_array_release(array_);
        cucore_buffer_release(buffer_);
        if (stream_ != nullptr) cucore_stream_synchronize(stream_);
        cucore_stream_release(stream_);
        array_ = nullptr;
        buffer_ = nullptr;
        stream_ = nullptr;
    }
    bool copy(benchmark::State &state, bool into_array) {
        if (into_array)
            return ok(state, cucore_opaque_array_copy_from_buffer(array_, buffer_, stream_),
                      "cucore_opaque_array_copy_from_buffer");
        return ok(state, cucore_opaque_array_copy_to_buffer(array_, buffer_, stream_),
                  "cucore_opaque_array_copy_to_buffer");
    }
    bool sync(benchmark::State &state) {
        return ok(state, cucore_stream_synchronize(stream_), "cucore_stream_synchronize");
    }
    bool fill_words(benchmark::State &state, std::uint32_t value) {
        return ok(state, cucore_buffer_fill(buffer_, value, 4, stream_), "cucore_buffer_fill") && sync(state);
    }
    bool read_word(benchmark::State &state, std::uint64_t offset, std::uint32_t *word) {
        return ok(state, cucore_buffer_copy_to_host(buffer_, offset, word, 4, stream_), "cucore_buffer_copy_to_host") &&
               sync(state);
    }

private:
    cucore_stream_t *stream_ = nullptr;
    cucore_buffer_t *buffer_ = nullptr;
    cucore_opaque_array_t *array_ = nullptr;
};

class Cpp {
public:
    bool start(benchmark::State &) {  // throws cucore::Error
        const cucore::Device &device = *env().cpp_device;
        stream_ = device.create_stream();
        buffer_ = device.allocate(kCopyBytes, stream_);
        array_ = device.create_opaque_array(cpp_options(kCopySide));
        return true;
    }
    void stop() {
        try {
            if (stream_) stream_.synchronize();
        } catch (const std::exception &) {  // tear-down: nothing left to report to
        }
        array_.reset();
        buffer_.reset();
        stream_.reset();
    }
    bool copy(benchmark::State &, bool into_array) {
        if (into_array)
            array_.copy_from(buffer_, stream_);
        else
            array_.copy_to(buffer_, stream_);
        return true;
    }
    bool sync(benchmark::State &) {
        stream_.synchronize();
        return true;
    }
    bool fill_words(benchmark::State &, std::uint32_t value) {
        buffer_.fill(value, stream_);
        stream_.synchronize();
        return true;
    }
    bool read_word(benchmark::State &, std::uint64_t offset, std::uint32_t *word) {
        buffer_.copy_to_host(offset, word, 4, stream_);
        stream_.synchronize();
        return true;
    }

private:
    cucore::Stream stream_;
    cucore::Buffer buffer_;
    cucore::OpaqueArray array_;
};

template <typename V>
struct Store {
    V variant;
    bool started = false;
    bool hooked = false;
    static void release() {
        Store &s = instance();
        if (!s.started) return;
        s.variant.stop();
        s.started = false;
    }
    static Store &instance() {
        static Store store;
        return store;
    }
};

// The variant, started on first use (nullptr after reporting why it could not start).
template <typename V>
V *begin(benchmark::State &state) {
    Store<V> &s = Store<V>::instance();
    if (!s.started) {
        if (!s.variant.start(state)) return nullptr;
        s.started = true;
        if (!s.hooked) at_tear_down(&Store<V>::release);
        s.hooked = true;
    }
    return &s.variant;
}

void check_word(benchmark::State &state, const char *where, std::uint32_t got, std::uint32_t want) {
    if (got == want) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s holds 0x%08x after the loop, expected 0x%08x", where, got, want);
    fail_check(state, buf);
}

// One row: copies into the array (buffer -> array) or out of it (array -> buffer), timed until the
// data has landed. The check goes through the buffer: a fresh pattern in the buffer, copied into
// the array before (into_array: by the loop), zeros in the buffer, the array copied back, then
// the buffer's first and last words must be the pattern.
template <typename V, bool kIntoArray>
void copy_run(benchmark::State &state) {
    try {
        V *v = begin<V>(state);
        if (v == nullptr) return;
        const std::uint32_t pattern = next_pattern();
        if (!v->fill_words(state, pattern)) return;
        if (!kIntoArray && (!v->copy(state, true) || !v->fill_words(state, 0))) return;  // the array holds the pattern
        const benchmark::IterationCount last = state.max_iterations;
        benchmark::IterationCount done = 0;
        for (auto _ : state) {
            if (!v->copy(state, kIntoArray)) return;
            if ((++done % kCopySyncEvery == 0 || done == last) && !v->sync(state)) return;
        }
        if (kIntoArray && (!v->fill_words(state, 0) || !v->copy(state, false) || !v->sync(state))) return;
        std::uint32_t first = 0, last_word = 0;
        if (!v->read_word(state, 0, &first) || !v->read_word(state, kCopyBytes - 4, &last_word)) return;
        check_word(state, "the copy's first word", first, pattern);
        if (!state.error_occurred()) check_word(state, "the copy's last word", last_word, pattern);
    } catch (const std::exception &e) {
        fail_cpp(state, e);
    }
}

// The anchors give copy targets on bandwidth (>= 0.98x raw); the table's C/raw is on time.
constexpr double kTimeBound = 1.0 / kBandwidthRatio;
constexpr double kCopyCounted = 2.0 * static_cast<double>(kCopyBytes);  // read + write

const bool registered = [] {
    register_operation({300, "array_create_destroy", "array create + destroy, 256x256 float4", 1.05,
                        "issue 14: array create + destroy, C ABI <= 1.05x raw", array_create_destroy_raw,
                        array_create_destroy_c, array_create_destroy_cpp});
    register_operation({310, "texture_create_destroy", "texture object create + destroy", 1.05,
                        "issue 14: texture object create + destroy, C ABI <= 1.05x raw", texture_create_destroy_raw,
                        texture_create_destroy_c, texture_create_destroy_cpp});
    register_operation({320, "array_from_buffer_64m", "buffer -> array copy, 64 MiB", kTimeBound,
                        "issue 14: array <-> buffer copy of 64 MiB, >= 0.98x raw in GB/s, i.e. <= 1/0.98 = 1.0204x "
                        "raw in time",
                        &copy_run<Raw, true>, &copy_run<CAbi, true>, &copy_run<Cpp, true>, kCopyCounted,
                        kBandwidthRatio, 0});
    register_operation({321, "array_to_buffer_64m", "array -> buffer copy, 64 MiB", kTimeBound,
                        "issue 14: array <-> buffer copy of 64 MiB, >= 0.98x raw in GB/s, i.e. <= 1/0.98 = 1.0204x "
                        "raw in time",
                        &copy_run<Raw, false>, &copy_run<CAbi, false>, &copy_run<Cpp, false>, kCopyCounted,
                        kBandwidthRatio, 0});
    return true;
}();

}  // namespace
}  // namespace cucore_bench
