// CUDA arrays and mipmapped arrays (opaque_array.h, opaque_array.hpp) on a real
// GPU: every format and channel count the driver takes round-trips bit-exact
// through host memory and buffers (BC formats as opaque 4x4 blocks), every
// kind of shape reports the packed layout the header promises and keeps its
// bytes, region copies land where a host model of the packed layout says
// (layers, cubemap faces, BC blocks, offsets and pitches on both sides), arrays
// copy to arrays, mipmapped arrays give their levels, foreign arrays are
// wrapped without being owned, and every error the header names is returned:
// bad formats, channel counts and shapes, each device limit (named in the
// message), copy size mismatches (both sizes in the message), use after close.
// The C ABI is used in most tests, the C++ façade in the others.
#include <cstdint>
#include <string>
#include <vector>

#include "array_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::contains;
using gpu::last_message;
using gpu::Owned;
using gpu::pattern;
using gpu::same_bytes;
namespace arr = gpu::arrays;

class ArrayGpuTest : public gpu::MemoryGpuTest {
protected:
    Owned<cucore_buffer_t> buffer(std::uint64_t size) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(dev_, size, s_, &b), CUCORE_SUCCESS) << cucore_last_error_message();
        return Owned<cucore_buffer_t>(b);
    }
    // cucore_opaque_array_create must refuse `o` with INVALID_ARGUMENT, clear
    // the out-pointer and say why; returns the message.
    std::string expect_refused(const cucore_opaque_array_options_t &o, const std::string &what) {
        cucore_opaque_array_t *a = reinterpret_cast<cucore_opaque_array_t *>(std::uintptr_t{0x10});
        const cucore_status_t s = cucore_opaque_array_create(dev_, &o, &a);
        EXPECT_EQ(s, CUCORE_ERROR_INVALID_ARGUMENT) << what << ": " << last_message();
        EXPECT_EQ(a, nullptr) << what;
        if (s == CUCORE_SUCCESS) cucore_opaque_array_release(a);
        const std::string message = last_message();
        EXPECT_FALSE(message.empty()) << what;
        return message;
    }
    cucore_status_t region_copy(const cucore_opaque_array_copy_t &c) { return cucore_opaque_array_copy(&c, s_); }
    // The body of the two format tests (below).
    void round_trip_formats(bool partial_blocks, int *combinations);
};

// ---- Formats ------------------------------------------------------------------------------

// Every format with every channel count the driver takes: the description, then
// host -> array -> host, array -> buffer, buffer -> array, bit-exact. With
// `partial_blocks`, the BC formats alone at extents that are not multiples of 4.
TEST_F(ArrayGpuTest, EveryFormatAndChannelCountRoundTripsBitExact) {
    int combinations = 0;
    round_trip_formats(false, &combinations);
    // 8 plain formats x 4 counts, then 0 and the own count of 101010_2, 14 BC and 12 normalized formats.
    EXPECT_EQ(combinations, 8 * 4 + 2 * (1 + 14 + 12));
}

// BC arrays whose extents are not multiples of 4: packed rows of ceil(w / 4)
// blocks, ceil(h / 4) block rows (the header's contract for partial blocks).
TEST_F(ArrayGpuTest, BlockCompressedArraysWithPartialBlocksRoundTrip) {
    int combinations = 0;
    round_trip_formats(true, &combinations);
    EXPECT_EQ(combinations, 14 * 2);
}

void ArrayGpuTest::round_trip_formats(bool partial_blocks, int *combinations) {
    std::uint32_t seed = partial_blocks ? 200 : 100;
    for (const arr::Format &f : arr::formats()) {
        if (partial_blocks && !f.bc) continue;
        const std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes = {
            partial_blocks ? std::make_pair(std::uint64_t{18}, std::uint64_t{10})
                           : std::make_pair(std::uint64_t{20}, std::uint64_t{12})};
        for (std::uint32_t channels : arr::channel_counts(f)) {
            for (const auto &shape : shapes) {
                SCOPED_TRACE(std::string(f.name) + " x " + std::to_string(channels) + " channels, " +
                             std::to_string(shape.first) + "x" + std::to_string(shape.second));
                const cucore_opaque_array_options_t o = arr::options(f.format, channels, shape.first, shape.second);
                Owned<cucore_opaque_array_t> a = arr::create(dev_, o);
                if (!a) continue;
                ++*combinations;
                const std::uint32_t element = arr::element_size(f, channels);
                const arr::Packed want = arr::packed(o, element, f.bc);
                const cucore_opaque_array_info_t i = arr::info(a.get());
                EXPECT_EQ(i.format, f.format);
                EXPECT_EQ(i.num_channels, channels != 0 ? channels : (f.own_channels != 0 ? f.own_channels : 1u));
                EXPECT_EQ(i.element_size, element);
                EXPECT_EQ(i.kind, CUCORE_ARRAY_KIND_PLAIN);
                EXPECT_EQ(i.flags, 0u);
                EXPECT_EQ(i.width, shape.first);
                EXPECT_EQ(i.height, shape.second);
                EXPECT_EQ(i.depth, 0u);
                EXPECT_EQ(i.layers, 0u);
                EXPECT_EQ(i.row_bytes, want.row_bytes);
                EXPECT_EQ(i.row_count, want.row_count);
                EXPECT_EQ(i.slice_count, 1u);
                EXPECT_EQ(i.size_bytes, want.size_bytes);
                EXPECT_EQ(i.device_ordinal, 0);
                EXPECT_EQ(i.is_owned, 1u);
                EXPECT_EQ(i.num_levels, 1u);

                const Bytes in = pattern(static_cast<std::size_t>(want.size_bytes), ++seed);
                arr::upload(a.get(), in.data(), in.size(), s_);
                EXPECT_TRUE(same_bytes(arr::download(a.get(), s_), in)) << "host -> array -> host";
                Owned<cucore_buffer_t> b = buffer(want.size_bytes);
                ASSERT_TRUE(b);
                CUCORE_ASSERT_OK(cucore_opaque_array_copy_to_buffer(a.get(), b.get(), s_));
                CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
                EXPECT_TRUE(same_bytes(raw_read(gpu::address_of(b.get()), in.size()), in)) << "array -> buffer";
                const Bytes in2 = pattern(static_cast<std::size_t>(want.size_bytes), ++seed);
                write(b.get(), in2);
                CUCORE_ASSERT_OK(cucore_opaque_array_copy_from_buffer(a.get(), b.get(), s_));
                EXPECT_TRUE(same_bytes(arr::download(a.get(), s_), in2)) << "buffer -> array -> host";
            }
        }
    }
}

// Channel counts a format does not take, unknown formats, and malformed options.
TEST_F(ArrayGpuTest, RefusedFormatsChannelCountsAndOptions) {
    for (const arr::Format &f : arr::formats()) {
        for (std::uint32_t channels : arr::refused_channel_counts(f)) {
            SCOPED_TRACE(std::string(f.name) + " x " + std::to_string(channels));
            expect_refused(arr::options(f.format, channels, 16, 16), "channel count");
        }
    }
    for (std::uint32_t format : {0u, 0x04u, 0x42u, 0x7fu, 0x9fu, 0xccu}) {
        SCOPED_TRACE("format " + std::to_string(format));
        expect_refused(arr::options(static_cast<cucore_array_format_t>(format), 1, 16, 16), "unknown format");
    }
    cucore_opaque_array_options_t o = arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 16);
    cucore_opaque_array_t *a = nullptr;
    CUCORE_EXPECT_STATUS(cucore_opaque_array_create(dev_, nullptr, &a), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_create(dev_, &o, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_create(nullptr, &o, &a), CUCORE_ERROR_INVALID_HANDLE);
    cucore_opaque_array_options_t bad = o;
    bad.struct_size = 0;
    expect_refused(bad, "struct_size 0");
    bad = o;
    bad.reserved0 = 1;
    expect_refused(bad, "reserved0");
    EXPECT_EQ(a, nullptr);
}

// ---- Shapes ---------------------------------------------------------------------------------

// Every kind of shape through the C++ façade: the description and the packed
// layout, host round trips through containers, array -> array and buffer copies.
TEST_F(ArrayGpuTest, EveryKindOfShapeKeepsItsBytes) {
    struct Shape {
        const char *what;
        cucore::OpaqueArrayOptions options;
        std::uint32_t element;
        std::uint64_t slices;
    };
    const std::vector<Shape> shapes = {
        {"1D", {CUCORE_ARRAY_FORMAT_FLOAT32, 2, CUCORE_ARRAY_KIND_PLAIN, 0, 100, 0, 0, 0}, 8, 1},
        {"2D", {CUCORE_ARRAY_FORMAT_UINT16, 4, CUCORE_ARRAY_KIND_PLAIN, 0, 33, 17, 0, 0}, 8, 1},
        {"3D", {CUCORE_ARRAY_FORMAT_INT8, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 16, 8, 5, 0}, 1, 5},
        {"layered 1D", {CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_LAYERED, 0, 64, 0, 0, 3}, 4, 3},
        {"layered 2D", {CUCORE_ARRAY_FORMAT_UINT8, 4, CUCORE_ARRAY_KIND_LAYERED, 0, 16, 8, 0, 3}, 4, 3},
        {"cubemap", {CUCORE_ARRAY_FORMAT_FLOAT16, 2, CUCORE_ARRAY_KIND_CUBEMAP, 0, 8, 8, 0, 0}, 4, 6},
        {"layered cubemap", {CUCORE_ARRAY_FORMAT_UINT32, 1, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 0, 8, 8, 0, 2}, 4, 12},
        {"layered BC3", {CUCORE_ARRAY_FORMAT_BC3_UNORM, 0, CUCORE_ARRAY_KIND_LAYERED, 0, 16, 12, 0, 2}, 16, 2},
        {"3D BC1", {CUCORE_ARRAY_FORMAT_BC1_UNORM, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 8, 8, 3, 0}, 8, 3},
    };
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = dev.create_stream();
    std::uint32_t seed = 300;
    for (const Shape &shape : shapes) {
        SCOPED_TRACE(shape.what);
        const bool bc = shape.options.format >= CUCORE_ARRAY_FORMAT_BC1_UNORM &&
                        shape.options.format <= CUCORE_ARRAY_FORMAT_BC7_UNORM_SRGB;
        const arr::Packed want = arr::packed(shape.options.to_c(), shape.element, bc);
        ASSERT_EQ(want.slice_count, shape.slices);
        try {
            const cucore::OpaqueArray a = dev.create_opaque_array(shape.options);
            const cucore::OpaqueArrayInfo i = a.info();
            EXPECT_EQ(i.kind, shape.options.kind);
            EXPECT_EQ(i.width, shape.options.width);
            EXPECT_EQ(i.height, shape.options.height);
            EXPECT_EQ(i.depth, shape.options.depth);
            EXPECT_EQ(i.layers, shape.options.layers);
            EXPECT_EQ(i.element_size, shape.element);
            EXPECT_EQ(a.element_size(), shape.element);
            EXPECT_EQ(a.format(), shape.options.format);
            EXPECT_EQ(i.row_bytes, want.row_bytes);
            EXPECT_EQ(i.row_count, want.row_count);
            EXPECT_EQ(i.slice_count, want.slice_count);
            EXPECT_EQ(i.size_bytes, want.size_bytes);
            EXPECT_EQ(a.size_bytes(), want.size_bytes);
            EXPECT_FALSE(a.is_surface_load_store());
            EXPECT_NE(a.handle(), nullptr);

            const Bytes in = pattern(static_cast<std::size_t>(want.size_bytes), ++seed);
            a.copy_from(in, s);
            Bytes out(in.size(), 0xEE);
            a.copy_to(out, s);
            s.synchronize();
            EXPECT_TRUE(same_bytes(out, in)) << "host -> array -> host";

            // Into a second array of the same shape, then out through a buffer.
            const cucore::OpaqueArray copy = cucore::OpaqueArray::create(dev, shape.options);
            copy.copy_from(a, s);
            const cucore::Buffer staged = dev.allocate(want.size_bytes, s);
            copy.copy_to(staged, s);
            Bytes via_buffer(in.size(), 0xEE);
            staged.copy_to_host(via_buffer, s);
            s.synchronize();
            EXPECT_TRUE(same_bytes(via_buffer, in)) << "array -> array -> buffer";
            // And back the other way: copy_to(array), copy_from(buffer).
            const Bytes in2 = pattern(in.size(), ++seed);
            staged.copy_from_host(in2, s);
            copy.copy_from(staged, s);
            copy.copy_to(a, s);
            a.copy_to(out.data(), out.size(), s);
            s.synchronize();
            EXPECT_TRUE(same_bytes(out, in2)) << "buffer -> array -> array -> host";
        } catch (const cucore::Error &e) {
            ADD_FAILURE() << e.status_name() << ": " << e.what();
        }
    }
}

// Shapes a kind does not take, unknown kinds and flags, BC where it cannot be.
TEST_F(ArrayGpuTest, BadShapesAreRefused) {
    using arr::options;
    const cucore_array_format_t f = CUCORE_ARRAY_FORMAT_FLOAT32;
    expect_refused(options(f, 1, 0, 4), "width 0");
    expect_refused(options(f, 1, 0), "1D width 0");
    expect_refused(options(f, 1, 8, 0, 3), "depth without height");
    expect_refused(options(f, 1, 8, 8, 0, CUCORE_ARRAY_KIND_PLAIN, 2), "layers on a plain array");
    expect_refused(options(f, 1, 8, 8, 2, CUCORE_ARRAY_KIND_LAYERED, 2), "a layered array with depth");
    expect_refused(options(f, 1, 8, 8, 0, CUCORE_ARRAY_KIND_LAYERED, 0), "a layered array of no layers");
    expect_refused(options(f, 1, 8, 4, 0, CUCORE_ARRAY_KIND_CUBEMAP), "a cubemap that is not square");
    expect_refused(options(f, 1, 8, 0, 0, CUCORE_ARRAY_KIND_CUBEMAP), "a cubemap of height 0");
    expect_refused(options(f, 1, 8, 8, 0, CUCORE_ARRAY_KIND_CUBEMAP, 1), "a cubemap with layers");
    expect_refused(options(f, 1, 8, 8, 6, CUCORE_ARRAY_KIND_CUBEMAP), "a cubemap with depth");
    expect_refused(options(f, 1, 8, 4, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2), "a layered cubemap not square");
    expect_refused(options(f, 1, 8, 8, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 0), "a layered cubemap of no layers");
    expect_refused(options(f, 1, 8, 8, 0, static_cast<cucore_array_kind_t>(9)), "unknown kind");
    expect_refused(options(f, 1, 8, 8, 0, CUCORE_ARRAY_KIND_PLAIN, 0, 0x100), "unknown flag");
    expect_refused(options(CUCORE_ARRAY_FORMAT_BC1_UNORM, 0, 16), "1D BC");
    expect_refused(options(CUCORE_ARRAY_FORMAT_BC7_UNORM, 0, 16, 16, 0, CUCORE_ARRAY_KIND_PLAIN, 0,
                           CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE),
                   "BC with surface load/store");
    // The C++ façade throws the same status.
    const cucore::Device dev = cucore::Device::get(0);
    cucore::OpaqueArrayOptions o;
    o.format = f;
    o.width = 8;
    o.height = 4;
    o.kind = CUCORE_ARRAY_KIND_CUBEMAP;
    CUCORE_EXPECT_THROW_STATUS(dev.create_opaque_array(o), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(cucore::OpaqueArray::create(dev, cucore::OpaqueArrayOptions{}),
                               CUCORE_ERROR_INVALID_ARGUMENT);
}

// Each device limit is checked before the driver is asked, and the message names
// it (the limit's value appears in it); a 3D shape within the alternate limits is taken.
TEST_F(ArrayGpuTest, LimitsAreCheckedAndNamed) {
    using arr::options;
    auto attr = [&](cucore_device_attribute_t a) {
        return static_cast<std::uint64_t>(arr::attribute(dev_, a));
    };
    const std::uint64_t t1d = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
    const std::uint64_t t2dw = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
    const std::uint64_t t2dh = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
    const std::uint64_t t3dw = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
    const std::uint64_t t3dd = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    const std::uint64_t t3dw_alt = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE);
    const std::uint64_t t3dh_alt = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE);
    const std::uint64_t t3dd_alt = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
    const std::uint64_t l1dw = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH);
    const std::uint64_t l1dn = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
    const std::uint64_t l2dw = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH);
    const std::uint64_t l2dh = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT);
    const std::uint64_t l2dn = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
    const std::uint64_t cube = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH);
    const std::uint64_t lcube_w = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH);
    const std::uint64_t lcube_n = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS);
    const std::uint64_t gather_w = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH);
    const std::uint64_t s1d = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
    const std::uint64_t s2dw = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH);
    const std::uint64_t s3dw = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH);
    const std::uint64_t scube = attr(CUCORE_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH);
    std::printf("limits: 1D %llu, 2D %llux%llu, 3D %llu (alt %llux%llux%llu), layered 1D %llu x %llu, layered 2D "
                "%llu x %llu x %llu, cubemap %llu, layered cubemap %llu x %llu, gather %llu, surface 1D %llu 2D %llu "
                "3D %llu cubemap %llu\n",
                (unsigned long long)t1d, (unsigned long long)t2dw, (unsigned long long)t2dh,
                (unsigned long long)t3dw, (unsigned long long)t3dw_alt, (unsigned long long)t3dh_alt,
                (unsigned long long)t3dd_alt, (unsigned long long)l1dw, (unsigned long long)l1dn,
                (unsigned long long)l2dw, (unsigned long long)l2dh, (unsigned long long)l2dn,
                (unsigned long long)cube, (unsigned long long)lcube_w, (unsigned long long)lcube_n,
                (unsigned long long)gather_w, (unsigned long long)s1d, (unsigned long long)s2dw,
                (unsigned long long)s3dw, (unsigned long long)scube);
    struct Case {
        const char *what;
        cucore_opaque_array_options_t o;
        std::vector<std::uint64_t> limits; // the message names one of these
    };
    const cucore_array_format_t f = CUCORE_ARRAY_FORMAT_UINT8;
    std::vector<Case> cases = {
        {"1D width", options(f, 1, t1d + 1), {t1d}},
        {"2D width", options(f, 1, t2dw + 1, 1), {t2dw}},
        {"2D height", options(f, 1, 1, t2dh + 1), {t2dh}},
        {"3D width", options(f, 1, std::max(t3dw, t3dw_alt) + 1, 1, 1), {t3dw, t3dw_alt}},
        {"3D depth", options(f, 1, 1, 1, std::max(t3dd, t3dd_alt) + 1), {t3dd, t3dd_alt}},
        {"layered 1D width", options(f, 1, l1dw + 1, 0, 0, CUCORE_ARRAY_KIND_LAYERED, 1), {l1dw}},
        {"layered 1D layers", options(f, 1, 4, 0, 0, CUCORE_ARRAY_KIND_LAYERED, l1dn + 1), {l1dn}},
        {"layered 2D width", options(f, 1, l2dw + 1, 1, 0, CUCORE_ARRAY_KIND_LAYERED, 1), {l2dw}},
        {"layered 2D height", options(f, 1, 1, l2dh + 1, 0, CUCORE_ARRAY_KIND_LAYERED, 1), {l2dh}},
        {"layered 2D layers", options(f, 1, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED, l2dn + 1), {l2dn}},
        {"cubemap width", options(f, 1, cube + 1, cube + 1, 0, CUCORE_ARRAY_KIND_CUBEMAP), {cube}},
        {"layered cubemap width",
         options(f, 1, lcube_w + 1, lcube_w + 1, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 1), {lcube_w}},
        {"layered cubemap layers", options(f, 1, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, lcube_n + 1), {lcube_n}},
    };
    // Flag-specific limits, where they are below the plain ones (else the plain limit decides).
    if (gather_w < t2dw)
        cases.push_back({"gather width",
                         options(f, 1, gather_w + 1, 1, 0, CUCORE_ARRAY_KIND_PLAIN, 0, CUCORE_ARRAY_FLAG_TEXTURE_GATHER),
                         {gather_w}});
    if (s1d < t1d)
        cases.push_back({"surface 1D width",
                         options(f, 1, s1d + 1, 0, 0, CUCORE_ARRAY_KIND_PLAIN, 0, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE),
                         {s1d}});
    if (s2dw < t2dw)
        cases.push_back({"surface 2D width",
                         options(f, 1, s2dw + 1, 1, 0, CUCORE_ARRAY_KIND_PLAIN, 0, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE),
                         {s2dw}});
    if (s3dw < t3dw)
        cases.push_back({"surface 3D width",
                         options(f, 1, s3dw + 1, 1, 1, CUCORE_ARRAY_KIND_PLAIN, 0, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE),
                         {s3dw}});
    if (scube < cube)
        cases.push_back({"surface cubemap width",
                         options(f, 1, scube + 1, scube + 1, 0, CUCORE_ARRAY_KIND_CUBEMAP, 0,
                                 CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE),
                         {scube}});
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        const std::string message = expect_refused(c.o, c.what);
        bool named = false;
        for (std::uint64_t limit : c.limits) named = named || contains(message, std::to_string(limit));
        EXPECT_TRUE(named) << "the message does not name the limit: " << message;
    }
    // At the limit, and within the alternate 3D limits, arrays are made.
    Owned<cucore_opaque_array_t> at_1d = arr::create(dev_, options(f, 1, t1d));
    EXPECT_TRUE(at_1d);
    if (t3dd_alt > t3dd && t3dw_alt >= 4 && t3dh_alt >= 4) {
        Owned<cucore_opaque_array_t> alternate = arr::create(dev_, options(f, 1, 4, 4, t3dd + 1));
        EXPECT_TRUE(alternate) << "a 4 x 4 x " << t3dd + 1 << " array fits the alternate 3D limits";
        if (alternate) {
            EXPECT_EQ(arr::info(alternate.get()).depth, t3dd + 1);
        }
    }
}

// Array flags are kept; sparse arrays where the device has them, NOT_SUPPORTED elsewhere.
TEST_F(ArrayGpuTest, FlagsAndSparseArrays) {
    for (std::uint32_t flags : {static_cast<std::uint32_t>(CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE),
                                static_cast<std::uint32_t>(CUCORE_ARRAY_FLAG_TEXTURE_GATHER)}) {
        Owned<cucore_opaque_array_t> a = arr::create(
            dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT8, 4, 64, 32, 0, CUCORE_ARRAY_KIND_PLAIN, 0, flags));
        ASSERT_TRUE(a);
        EXPECT_EQ(arr::info(a.get()).flags, flags);
    }
    // Texture gather is for 2D arrays only.
    expect_refused(arr::options(CUCORE_ARRAY_FORMAT_UINT8, 4, 8, 8, 4, CUCORE_ARRAY_KIND_PLAIN, 0,
                                CUCORE_ARRAY_FLAG_TEXTURE_GATHER),
                   "gather on a 3D array");
    const int sparse = arr::attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED);
    const cucore_opaque_array_options_t o =
        arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 512, 512, 0, CUCORE_ARRAY_KIND_PLAIN, 0, CUCORE_ARRAY_FLAG_SPARSE);
    cucore_opaque_array_t *s = nullptr;
    const cucore_status_t status = cucore_opaque_array_create(dev_, &o, &s);
    Owned<cucore_opaque_array_t> owned(s);
    if (sparse != 0) {
        ASSERT_EQ(status, CUCORE_SUCCESS) << last_message();
        EXPECT_EQ(arr::info(s).flags, static_cast<std::uint32_t>(CUCORE_ARRAY_FLAG_SPARSE));
    } else {
        EXPECT_EQ(status, CUCORE_ERROR_NOT_SUPPORTED) << last_message();
        EXPECT_EQ(s, nullptr);
    }
}

// ---- Copy sizes, use after close ----------------------------------------------------------

TEST_F(ArrayGpuTest, WholeArrayCopySizesAreChecked) {
    Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 10, 10));
    ASSERT_TRUE(a);
    const Bytes in = pattern(400, 7);
    // Short host memory, either way: the message names both sizes.
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_host(a.get(), in.data(), 399, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "399") && contains(last_message(), "400")) << last_message();
    Bytes out(600, 0x5A);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_to_host(a.get(), out.data(), 396, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "396") && contains(last_message(), "400")) << last_message();
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_host(a.get(), nullptr, 400, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_to_host(a.get(), nullptr, 400, s_), CUCORE_ERROR_INVALID_ARGUMENT);
    // More host memory than the array: size_bytes move, the rest is untouched.
    arr::upload(a.get(), in.data(), in.size(), s_);
    CUCORE_ASSERT_OK(cucore_opaque_array_copy_to_host(a.get(), out.data(), out.size(), s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(Bytes(out.begin(), out.begin() + 400), in));
    EXPECT_TRUE(same_bytes(Bytes(out.begin() + 400, out.end()), Bytes(200, 0x5A)));
    // Buffers: too small is refused with both sizes; larger is fine.
    Owned<cucore_buffer_t> small = buffer(399), large = buffer(4096);
    ASSERT_TRUE(small && large);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_buffer(a.get(), small.get(), s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "399") && contains(last_message(), "400")) << last_message();
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_to_buffer(a.get(), small.get(), s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "399") && contains(last_message(), "400")) << last_message();
    const Bytes fill = pattern(4096, 8);
    write(large.get(), fill);
    CUCORE_ASSERT_OK(cucore_opaque_array_copy_to_buffer(a.get(), large.get(), s_));
    Bytes want = fill;
    std::copy(in.begin(), in.end(), want.begin());
    EXPECT_TRUE(same_bytes(read(large.get()), want)) << "only size_bytes were written";
    // Arrays of another layout.
    Owned<cucore_opaque_array_t> taller = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 10, 11));
    Owned<cucore_opaque_array_t> wider = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 2, 10, 10));
    ASSERT_TRUE(taller && wider);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_array(taller.get(), a.get(), s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(last_message().empty());
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_array(wider.get(), a.get(), s_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(last_message().empty());
    EXPECT_TRUE(same_bytes(arr::download(a.get(), s_), in)) << "refused copies changed nothing";
    // The façade throws the same.
    const cucore::OpaqueArray cpp = cucore::OpaqueArray::borrow(a.get());
    const cucore::Stream stream = cucore::Stream::borrow(s_);
    std::vector<float> short_host(99);
    CUCORE_EXPECT_THROW_STATUS(cpp.copy_from(short_host, stream), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_EXPECT_THROW_STATUS(cpp.copy_to(short_host, stream), CUCORE_ERROR_INVALID_ARGUMENT);
    std::vector<float> host(100);
    cpp.copy_to(host, stream);
    stream.synchronize();
    EXPECT_TRUE(same_bytes(arr::bytes_of(host), in));
}

TEST_F(ArrayGpuTest, UseAfterCloseIsInvalidState) {
    Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT32, 1, 16, 16));
    Owned<cucore_opaque_array_t> other = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT32, 1, 16, 16));
    Owned<cucore_buffer_t> b = buffer(1024);
    ASSERT_TRUE(a && other && b);
    CUCORE_ASSERT_OK(cucore_opaque_array_close(a.get()));
    CUCORE_ASSERT_OK(cucore_opaque_array_close(a.get())); // idempotent
    cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    CUCORE_EXPECT_STATUS(cucore_opaque_array_info(a.get(), &i), CUCORE_ERROR_INVALID_STATE);
    EXPECT_TRUE(contains(last_message(), "close")) << last_message();
    void *raw = reinterpret_cast<void *>(1);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_handle(a.get(), &raw), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(raw, nullptr);
    Bytes host(1024);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_host(a.get(), host.data(), host.size(), s_),
                         CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_to_host(a.get(), host.data(), host.size(), s_),
                         CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_buffer(a.get(), b.get(), s_), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_to_buffer(a.get(), b.get(), s_), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_array(other.get(), a.get(), s_), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_from_array(a.get(), other.get(), s_), CUCORE_ERROR_INVALID_STATE);
    cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c.src_array.array = a.get();
    c.dst_memory.host = host.data();
    c.width = 4;
    CUCORE_EXPECT_STATUS(region_copy(c), CUCORE_ERROR_INVALID_STATE);
    cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
    r.array = a.get();
    cucore_texture_object_t *t = nullptr;
    CUCORE_EXPECT_STATUS(cucore_texture_object_create(nullptr, &r, nullptr, &t), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(t, nullptr);
    // A closed buffer as a copy side.
    CUCORE_ASSERT_OK(cucore_buffer_close(b.get(), s_));
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy_to_buffer(other.get(), b.get(), s_), CUCORE_ERROR_INVALID_STATE);
    // The handle stays valid until released; afterwards it is unknown.
    cucore_opaque_array_t *stale = a.get();
    CUCORE_EXPECT_OK(cucore_opaque_array_release(a.release()));
    CUCORE_EXPECT_STATUS(cucore_opaque_array_retain(stale), CUCORE_ERROR_INVALID_HANDLE);

    // The façade: every call after close throws INVALID_STATE.
    const cucore::Device dev = cucore::Device::get(0);
    const cucore::Stream s = dev.create_stream();
    const cucore::OpaqueArray cpp = dev.create_opaque_array({CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 8});
    cpp.close();
    cpp.close();
    std::vector<float> v(8);
    CUCORE_EXPECT_THROW_STATUS(cpp.info(), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(cpp.handle(), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(cpp.size_bytes(), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(cpp.copy_from(v, s), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(cpp.copy_to(v, s), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(cpp)),
                               CUCORE_ERROR_INVALID_STATE);
}

// ---- Region copies --------------------------------------------------------------------------

// Host and buffer regions (with offsets, pitches and slices on the memory side)
// into and out of the layers of a layered array at offsets, and array to array.
TEST_F(ArrayGpuTest, RegionCopiesIntoLayersWithOffsets) {
    const std::uint64_t es = 4; // UINT16 x 2
    const cucore_opaque_array_options_t lo =
        arr::options(CUCORE_ARRAY_FORMAT_UINT16, 2, 24, 16, 0, CUCORE_ARRAY_KIND_LAYERED, 5);
    Owned<cucore_opaque_array_t> layered = arr::create(dev_, lo);
    ASSERT_TRUE(layered);
    arr::HostArray model(arr::packed(lo, es, false));
    model.bytes = pattern(model.bytes.size(), 41);
    arr::upload(layered.get(), model.bytes.data(), model.bytes.size(), s_);

    // (a) Host -> array: 7 x 5 elements x 3 layers into (3, 2, layer 1), from a
    // host volume of 40-byte rows, 6 rows a slice, starting at byte 4 of row 1.
    const Bytes host = pattern(3 * 6 * 40 + 64, 42);
    {
        cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        c.src_memory.host = const_cast<std::uint8_t *>(host.data());
        c.src_memory.pitch = 40;
        c.src_memory.height = 6;
        c.src_memory.x = 4;
        c.src_memory.y = 1;
        c.dst_array.array = layered.get();
        c.dst_array.x = 3;
        c.dst_array.y = 2;
        c.dst_array.z = 1;
        c.width = 7;
        c.height = 5;
        c.depth = 3;
        CUCORE_ASSERT_OK(region_copy(c));
        arr::model_copy_in(model, 3 * es, 2, 1, host.data() + 1 * 40 + 4, 40, 6, 7 * es, 5, 3);
    }
    // (b) Buffer -> array: from byte 64 of a buffer (128-byte rows, 10 rows a
    // slice), starting at byte 8, row 1, slice 1; 10 x 4 x 2 into (12, 9, layer 3).
    const Bytes buffer_bytes = pattern(64 + 4 * 10 * 128, 43);
    Owned<cucore_buffer_t> src = buffer(buffer_bytes.size());
    ASSERT_TRUE(src);
    write(src.get(), buffer_bytes);
    {
        cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        c.src_memory.buffer = src.get();
        c.src_memory.offset = 64;
        c.src_memory.pitch = 128;
        c.src_memory.height = 10;
        c.src_memory.x = 8;
        c.src_memory.y = 1;
        c.src_memory.z = 1;
        c.dst_array.array = layered.get();
        c.dst_array.x = 12;
        c.dst_array.y = 9;
        c.dst_array.z = 3;
        c.width = 10;
        c.height = 4;
        c.depth = 2;
        CUCORE_ASSERT_OK(region_copy(c));
        arr::model_copy_in(model, 12 * es, 9, 3, buffer_bytes.data() + 64 + (1 * 10 + 1) * 128 + 8, 128, 10, 10 * es,
                           4, 2);
    }
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_TRUE(same_bytes(arr::download(layered.get(), s_), model.bytes)) << "after the copies in";

    // (c) Array -> host, packed (pitch 0, height 0): 20 x 10 elements of all 5 layers from (2, 3).
    {
        Bytes out(20 * es * 10 * 5, 0xEE);
        cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        c.src_array.array = layered.get();
        c.src_array.x = 2;
        c.src_array.y = 3;
        c.dst_memory.host = out.data();
        c.width = 20;
        c.height = 10;
        c.depth = 5;
        CUCORE_ASSERT_OK(region_copy(c));
        CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
        Bytes want;
        for (std::uint64_t z = 0; z < 5; ++z)
            for (std::uint64_t y = 0; y < 10; ++y)
                want.insert(want.end(), model.at(2 * es, 3 + y, z), model.at(2 * es, 3 + y, z) + 20 * es);
        EXPECT_TRUE(same_bytes(out, want)) << "array -> packed host";
    }
    // (d) Array -> buffer with a pitch: layer 4 whole into 96-byte rows.
    {
        Owned<cucore_buffer_t> dst = buffer(16 * 112);
        ASSERT_TRUE(dst);
        const Bytes before = pattern(16 * 112, 44);
        write(dst.get(), before);
        cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        c.src_array.array = layered.get();
        c.src_array.z = 4;
        c.dst_memory.buffer = dst.get();
        c.dst_memory.pitch = 112;
        c.width = 24;
        c.height = 16;
        CUCORE_ASSERT_OK(region_copy(c));
        Bytes want = before;
        for (std::uint64_t y = 0; y < 16; ++y) std::memcpy(&want[y * 112], model.at(0, y, 4), 24 * es);
        EXPECT_TRUE(same_bytes(read(dst.get()), want)) << "array -> pitched buffer";
    }
    // (e) Array -> array: 8 x 8 x 5 from (1, 1, 0) of the layered array into (20, 10, 1) of a 3D one.
    {
        const cucore_opaque_array_options_t vo = arr::options(CUCORE_ARRAY_FORMAT_UINT16, 2, 32, 20, 6);
        Owned<cucore_opaque_array_t> volume = arr::create(dev_, vo);
        ASSERT_TRUE(volume);
        arr::HostArray vmodel(arr::packed(vo, es, false));
        vmodel.bytes = pattern(vmodel.bytes.size(), 45);
        arr::upload(volume.get(), vmodel.bytes.data(), vmodel.bytes.size(), s_);
        cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        c.src_array.array = layered.get();
        c.src_array.x = 1;
        c.src_array.y = 1;
        c.dst_array.array = volume.get();
        c.dst_array.x = 20;
        c.dst_array.y = 10;
        c.dst_array.z = 1;
        c.width = 8;
        c.height = 8;
        c.depth = 5;
        CUCORE_ASSERT_OK(region_copy(c));
        for (std::uint64_t z = 0; z < 5; ++z)
            for (std::uint64_t y = 0; y < 8; ++y) std::memcpy(vmodel.at(20 * es, 10 + y, 1 + z), model.at(es, 1 + y, z), 8 * es);
        EXPECT_TRUE(same_bytes(arr::download(volume.get(), s_), vmodel.bytes)) << "array -> array";
    }
    // (f) A layered 1D array: 10 elements into 3 layers at x 5 from packed host rows.
    {
        const cucore_opaque_array_options_t o1 =
            arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 32, 0, 0, CUCORE_ARRAY_KIND_LAYERED, 4);
        Owned<cucore_opaque_array_t> lines = arr::create(dev_, o1);
        ASSERT_TRUE(lines);
        arr::HostArray lmodel(arr::packed(o1, 4, false));
        lmodel.bytes = pattern(lmodel.bytes.size(), 46);
        arr::upload(lines.get(), lmodel.bytes.data(), lmodel.bytes.size(), s_);
        const Bytes rows = pattern(3 * 40, 47);
        cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        c.src_memory.host = const_cast<std::uint8_t *>(rows.data());
        c.dst_array.array = lines.get();
        c.dst_array.x = 5;
        c.dst_array.z = 1;
        c.width = 10;
        c.height = 1;
        c.depth = 3;
        CUCORE_ASSERT_OK(region_copy(c));
        arr::model_copy_in(lmodel, 5 * 4, 0, 1, rows.data(), 40, 1, 40, 1, 3);
        EXPECT_TRUE(same_bytes(arr::download(lines.get(), s_), lmodel.bytes)) << "layered 1D";
    }
}

// Cubemap faces and the faces of a layered cubemap (z = 6 x cubemap + face),
// through the C++ façade's ArrayRegion.
TEST_F(ArrayGpuTest, RegionCopiesIntoCubemapFaces) {
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = dev.create_stream();
    const cucore::OpaqueArrayOptions co{CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_CUBEMAP, 0, 8, 8};
    const cucore::OpaqueArray cube = dev.create_opaque_array(co);
    arr::HostArray model(arr::packed(co.to_c(), 4, false));
    model.bytes = pattern(model.bytes.size(), 51);
    cube.copy_from(model.bytes, s);
    // A whole face (3) from packed host rows; a 4 x 2 patch of face 5 at (2, 3)
    // from rows of 16 bytes.
    const Bytes face = pattern(8 * 8 * 4, 52);
    const Bytes patch = pattern(4 * 2 * 4, 53);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(cube).at(0, 0, 3), cucore::MemoryRegion::host(face.data(), 0),
                              cucore::Extent3D{8, 8, 1}, s);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(cube).at(2, 3, 5), cucore::MemoryRegion::host(patch.data(), 16),
                              cucore::Extent3D{4, 2, 1}, s);
    arr::model_copy_in(model, 0, 0, 3, face.data(), 32, 8, 32, 8, 1);
    arr::model_copy_in(model, 2 * 4, 3, 5, patch.data(), 16, 2, 16, 2, 1);
    Bytes out(model.bytes.size());
    cube.copy_to(out, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(out, model.bytes)) << "cubemap";
    // Face 2 of a buffer-staged copy back out: array -> buffer region.
    const cucore::Buffer staged = dev.allocate(8 * 8 * 4, s);
    cucore::OpaqueArray::copy(cucore::MemoryRegion(staged, 32), cucore::ArrayRegion(cube).at(0, 0, 2), {8, 8, 1}, s);
    Bytes face2(8 * 8 * 4);
    staged.copy_to_host(face2, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(face2, Bytes(model.at(0, 0, 2), model.at(0, 0, 2) + face2.size()))) << "face 2 out";

    // Layered cubemap: face 2 of cubemap 1 is slice 8.
    const cucore::OpaqueArrayOptions lo{CUCORE_ARRAY_FORMAT_UINT8, 4, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 0, 4, 4, 0, 2};
    const cucore::OpaqueArray layered = dev.create_opaque_array(lo);
    arr::HostArray lmodel(arr::packed(lo.to_c(), 4, false));
    lmodel.bytes = pattern(lmodel.bytes.size(), 54);
    layered.copy_from(lmodel.bytes, s);
    const Bytes tile = pattern(4 * 4 * 4, 55);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(layered).at(0, 0, 6 * 1 + 2), cucore::MemoryRegion::host(tile.data(), 16),
                              {4, 4, 1}, s);
    arr::model_copy_in(lmodel, 0, 0, 8, tile.data(), 16, 4, 16, 4, 1);
    // A copy between arrays of other element sizes (4 and 16 bytes) is refused.
    const cucore::OpaqueArray float4_cube =
        dev.create_opaque_array({CUCORE_ARRAY_FORMAT_FLOAT32, 4, CUCORE_ARRAY_KIND_CUBEMAP, 0, 4, 4});
    CUCORE_EXPECT_THROW_STATUS(
        cucore::OpaqueArray::copy(cucore::ArrayRegion(layered), cucore::ArrayRegion(float4_cube), {4, 4, 1}, s),
        CUCORE_ERROR_INVALID_ARGUMENT);
    Bytes lout(lmodel.bytes.size());
    layered.copy_to(lout, s);
    s.synchronize();
    EXPECT_TRUE(same_bytes(lout, lmodel.bytes)) << "layered cubemap";
}

// BC arrays: region copies move whole 4x4 blocks; offsets and extents must be
// on the block grid unless they reach the edge.
TEST_F(ArrayGpuTest, BlockCompressedRegionCopies) {
    const cucore_opaque_array_options_t o = arr::options(CUCORE_ARRAY_FORMAT_BC1_UNORM, 0, 32, 32);
    Owned<cucore_opaque_array_t> a = arr::create(dev_, o);
    ASSERT_TRUE(a);
    arr::HostArray model(arr::packed(o, 8, true)); // 8 x 8 blocks of 8 bytes
    ASSERT_EQ(model.layout.row_bytes, 64u);
    ASSERT_EQ(model.layout.row_count, 8u);
    model.bytes = pattern(model.bytes.size(), 61);
    arr::upload(a.get(), model.bytes.data(), model.bytes.size(), s_);
    // 8 x 8 texels (2 x 2 blocks, packed rows of 16 bytes) at texel (8, 4): block (2, 1).
    const Bytes tile = pattern(32, 62);
    cucore_opaque_array_copy_t c = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    c.src_memory.host = const_cast<std::uint8_t *>(tile.data());
    c.dst_array.array = a.get();
    c.dst_array.x = 8;
    c.dst_array.y = 4;
    c.width = 8;
    c.height = 8;
    CUCORE_ASSERT_OK(region_copy(c));
    arr::model_copy_in(model, 2 * 8, 1, 0, tile.data(), 16, 2, 16, 2, 1);
    EXPECT_TRUE(same_bytes(arr::download(a.get(), s_), model.bytes)) << "BC1 tile";
    // Off the grid: refused, nothing written.
    cucore_opaque_array_copy_t bad = c;
    bad.dst_array.x = 2;
    CUCORE_EXPECT_STATUS(region_copy(bad), CUCORE_ERROR_INVALID_ARGUMENT);
    bad = c;
    bad.width = 6;
    CUCORE_EXPECT_STATUS(region_copy(bad), CUCORE_ERROR_INVALID_ARGUMENT);
    bad = c;
    bad.dst_array.y = 1;
    CUCORE_EXPECT_STATUS(region_copy(bad), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(same_bytes(arr::download(a.get(), s_), model.bytes)) << "refused copies wrote nothing";
}

// A partial last block: 30 x 18 texels are 8 x 5 blocks; 2 x 2 texels at
// (28, 16) reach both edges and move one block.
TEST_F(ArrayGpuTest, BlockCompressedRegionCopyReachingAPartialBlock) {
    const cucore_opaque_array_options_t edge_o = arr::options(CUCORE_ARRAY_FORMAT_BC4_UNORM, 0, 30, 18);
    Owned<cucore_opaque_array_t> edge = arr::create(dev_, edge_o);
    ASSERT_TRUE(edge);
    arr::HostArray emodel(arr::packed(edge_o, 8, true));
    ASSERT_EQ(emodel.layout.row_bytes, 64u);
    ASSERT_EQ(emodel.layout.row_count, 5u);
    emodel.bytes = pattern(emodel.bytes.size(), 63);
    arr::upload(edge.get(), emodel.bytes.data(), emodel.bytes.size(), s_);
    const Bytes block = pattern(8, 64);
    cucore_opaque_array_copy_t e = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    e.src_memory.host = const_cast<std::uint8_t *>(block.data());
    e.dst_array.array = edge.get();
    e.dst_array.x = 28;
    e.dst_array.y = 16;
    e.width = 2;
    e.height = 2;
    CUCORE_ASSERT_OK(region_copy(e));
    std::memcpy(emodel.at(7 * 8, 4, 0), block.data(), 8);
    EXPECT_TRUE(same_bytes(arr::download(edge.get(), s_), emodel.bytes)) << "edge block";
}

// Region copies the header refuses, each with INVALID_ARGUMENT and a message.
TEST_F(ArrayGpuTest, BadRegionCopiesAreRefused) {
    Owned<cucore_opaque_array_t> a = arr::create(
        dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 2, 16, 8, 0, CUCORE_ARRAY_KIND_LAYERED, 3));
    Owned<cucore_opaque_array_t> other = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 8, 3));
    Owned<cucore_opaque_array_t> line = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 2, 64));
    Owned<cucore_buffer_t> b = buffer(1024);
    ASSERT_TRUE(a && other && line && b);
    Bytes host(16 * 8 * 8 * 3, 0);
    cucore_opaque_array_copy_t ok = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    ok.src_array.array = a.get();
    ok.dst_memory.host = host.data();
    ok.width = 16;
    ok.height = 8;
    ok.depth = 3;
    CUCORE_ASSERT_OK(region_copy(ok));
    struct Bad {
        const char *what;
        cucore_opaque_array_copy_t c;
    };
    std::vector<Bad> cases;
    auto add = [&](const char *what, auto change) {
        cucore_opaque_array_copy_t c = ok;
        change(c);
        cases.push_back({what, c});
    };
    add("x + width beyond the array", [](auto &c) { c.src_array.x = 1; });
    add("y + height beyond the array", [](auto &c) { c.height = 9; });
    add("z + depth beyond the layers", [](auto &c) { c.src_array.z = 1; });
    add("zero width", [](auto &c) { c.width = 0; });
    add("zero height", [](auto &c) { c.height = 0; });
    add("zero depth", [](auto &c) { c.depth = 0; });
    add("no array side", [&](auto &c) {
        c.src_array.array = nullptr;
        c.src_memory.host = host.data();
    });
    add("buffer and host on one side", [&](auto &c) { c.dst_memory.buffer = b.get(); });
    add("neither buffer nor host", [](auto &c) { c.dst_memory.host = nullptr; });
    add("a buffer region beyond the buffer", [&](auto &c) {
        c.dst_memory.host = nullptr;
        c.dst_memory.buffer = b.get();
    });
    add("element sizes differ", [&](auto &c) {
        c.dst_memory.host = nullptr;
        c.dst_array.array = other.get();
    });
    add("height above 1 for a 1D array", [&](auto &c) {
        c.src_array.array = line.get();
        c.width = 8;
        c.height = 2;
        c.depth = 1;
    });
    add("bad struct_size", [](auto &c) { c.struct_size = 6; }); // ends inside reserved0
    add("reserved0", [](auto &c) { c.reserved0 = 1; });
    add("overflow", [](auto &c) { c.src_array.x = ~std::uint64_t{0} - 4; });
    for (const Bad &bad : cases) {
        SCOPED_TRACE(bad.what);
        CUCORE_EXPECT_STATUS(region_copy(bad.c), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_FALSE(last_message().empty());
    }
    CUCORE_EXPECT_STATUS(cucore_opaque_array_copy(nullptr, s_), CUCORE_ERROR_INVALID_ARGUMENT);
}

// ---- Mipmapped arrays --------------------------------------------------------------------------

TEST_F(ArrayGpuTest, MipmappedArraysAndTheirLevels) {
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = dev.create_stream();
    const cucore::OpaqueArrayOptions o{CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 64, 32};
    cucore::MipmappedArray m = dev.create_mipmapped_array(o, 7); // 1 + log2(64)
    const cucore::OpaqueArrayInfo mi = m.info();
    EXPECT_EQ(mi.num_levels, 7u);
    EXPECT_EQ(m.num_levels(), 7u);
    EXPECT_EQ(mi.width, 64u);
    EXPECT_EQ(mi.height, 32u);
    EXPECT_EQ(mi.is_owned, 1u);
    EXPECT_NE(m.handle(), nullptr);
    // Each level: its extents, its own storage.
    for (std::uint32_t level = 0; level < 7; ++level) {
        SCOPED_TRACE("level " + std::to_string(level));
        const cucore::OpaqueArray l = m.level(level);
        const cucore::OpaqueArrayInfo li = l.info();
        const std::uint64_t w = std::max<std::uint64_t>(1, 64 >> level), h = std::max<std::uint64_t>(1, 32 >> level);
        EXPECT_EQ(li.width, w);
        EXPECT_EQ(li.height, h);
        EXPECT_EQ(li.is_owned, 0u);
        EXPECT_EQ(li.size_bytes, w * h * 4);
        l.copy_from(std::vector<float>(w * h, 100.0f + static_cast<float>(level)), s);
    }
    for (std::uint32_t level = 0; level < 7; ++level) {
        const cucore::OpaqueArray l = m.level(level);
        std::vector<float> got(l.size_bytes() / 4, -1.0f);
        l.copy_to(got, s);
        s.synchronize();
        EXPECT_EQ(got, std::vector<float>(got.size(), 100.0f + static_cast<float>(level))) << "level " << level;
    }
    // Past the last level, too many or no levels: INVALID_ARGUMENT naming the count.
    try {
        (void)m.level(7);
        ADD_FAILURE() << "level 7 of 7 was given";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(e.what(), "7")) << e.what();
    }
    try {
        (void)dev.create_mipmapped_array(o, 8);
        ADD_FAILURE() << "8 levels of a 64 x 32 array were made";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(e.what(), "7")) << e.what();
    }
    CUCORE_EXPECT_THROW_STATUS(dev.create_mipmapped_array(o, 0), CUCORE_ERROR_INVALID_ARGUMENT);

    // A level keeps its mipmapped array alive: released, then the level still works.
    const std::size_t before = gpu::live(CUCORE_OBJECT_MIPMAPPED_ARRAY);
    cucore::OpaqueArray level2 = m.level(2);
    m.reset();
    std::vector<float> got(16 * 8, 0.0f);
    level2.copy_to(got, s);
    s.synchronize();
    EXPECT_EQ(got, std::vector<float>(16 * 8, 102.0f));
    level2.copy_from(std::vector<float>(16 * 8, 7.0f), s);
    level2.copy_to(got, s);
    s.synchronize();
    EXPECT_EQ(got, std::vector<float>(16 * 8, 7.0f));
    level2.reset();
    EXPECT_EQ(gpu::live(CUCORE_OBJECT_MIPMAPPED_ARRAY), before - 1);

    // close: the mipmapped array is unusable, a level taken before still works.
    cucore::MipmappedArray m2 = cucore::MipmappedArray::create(dev, o, 3);
    const cucore::OpaqueArray keep = m2.level(1);
    m2.close();
    m2.close();
    CUCORE_EXPECT_THROW_STATUS(m2.info(), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(m2.level(0), CUCORE_ERROR_INVALID_STATE);
    CUCORE_EXPECT_THROW_STATUS(m2.handle(), CUCORE_ERROR_INVALID_STATE);
    keep.copy_from(std::vector<float>(32 * 16, 3.0f), s);
    std::vector<float> kept(32 * 16);
    keep.copy_to(kept, s);
    s.synchronize();
    EXPECT_EQ(kept, std::vector<float>(32 * 16, 3.0f));

    // A 3D mipmapped array halves all three extents.
    const cucore::MipmappedArray v = cucore::MipmappedArray::create(
        dev, {CUCORE_ARRAY_FORMAT_UINT8, 4, CUCORE_ARRAY_KIND_PLAIN, 0, 16, 8, 4}, 5);
    const cucore::OpaqueArrayInfo v3 = v.level(3).info();
    EXPECT_EQ(v3.width, 2u);
    EXPECT_EQ(v3.height, 1u);
    EXPECT_EQ(v3.depth, 1u);
}

// ---- Foreign arrays -------------------------------------------------------------------------------

TEST_F(ArrayGpuTest, ForeignArraysAreWrappedNotOwned) {
    struct Raw {
        const char *what;
        CUDA_ARRAY3D_DESCRIPTOR d;
        cucore_array_kind_t kind;
        std::uint64_t depth, layers, slices;
    };
    auto descriptor = [](std::size_t w, std::size_t h, std::size_t d, CUarray_format f, unsigned channels,
                         unsigned flags) {
        CUDA_ARRAY3D_DESCRIPTOR desc{};
        desc.Width = w;
        desc.Height = h;
        desc.Depth = d;
        desc.Format = f;
        desc.NumChannels = channels;
        desc.Flags = flags;
        return desc;
    };
    const std::vector<Raw> raws = {
        {"2D float2", descriptor(17, 9, 0, CU_AD_FORMAT_FLOAT, 2, 0), CUCORE_ARRAY_KIND_PLAIN, 0, 0, 1},
        {"layered", descriptor(8, 4, 3, CU_AD_FORMAT_UNSIGNED_INT16, 1, CUDA_ARRAY3D_LAYERED), CUCORE_ARRAY_KIND_LAYERED,
         0, 3, 3},
        {"cubemap", descriptor(4, 4, 6, CU_AD_FORMAT_UNSIGNED_INT8, 4, CUDA_ARRAY3D_CUBEMAP), CUCORE_ARRAY_KIND_CUBEMAP,
         0, 0, 6},
        {"layered cubemap", descriptor(4, 4, 12, CU_AD_FORMAT_SIGNED_INT32, 1, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP),
         CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 0, 2, 12},
        {"3D", descriptor(8, 4, 2, CU_AD_FORMAT_HALF, 2, 0), CUCORE_ARRAY_KIND_PLAIN, 2, 0, 2},
    };
    std::uint32_t seed = 70;
    for (const Raw &r : raws) {
        SCOPED_TRACE(r.what);
        CUarray raw = nullptr;
        {
            gpu::ScopedContext scope(primary_);
            CU_ASSERT_OK(gpu::cu().Array3DCreate(&raw, &r.d));
        }
        gpu::ReleaseCounter released;
        cucore_opaque_array_t *a = nullptr;
        CUCORE_ASSERT_OK(cucore_opaque_array_from_handle(dev_, raw, gpu::ReleaseCounter::callback, &released, &a));
        const cucore_opaque_array_info_t i = arr::info(a);
        EXPECT_EQ(i.is_owned, 0u);
        EXPECT_EQ(static_cast<int>(i.format), static_cast<int>(r.d.Format));
        EXPECT_EQ(i.num_channels, r.d.NumChannels);
        EXPECT_EQ(i.kind, r.kind);
        EXPECT_EQ(i.width, r.d.Width);
        EXPECT_EQ(i.height, r.d.Height);
        EXPECT_EQ(i.depth, r.depth);
        EXPECT_EQ(i.layers, r.layers);
        EXPECT_EQ(i.slice_count, r.slices);
        void *handle = nullptr;
        CUCORE_EXPECT_OK(cucore_opaque_array_handle(a, &handle));
        EXPECT_EQ(handle, static_cast<void *>(raw));
        const Bytes in = pattern(static_cast<std::size_t>(i.size_bytes), ++seed);
        arr::upload(a, in.data(), in.size(), s_);
        EXPECT_TRUE(same_bytes(arr::download(a, s_), in));
        EXPECT_EQ(released.calls.load(), 0);
        CUCORE_ASSERT_OK(cucore_opaque_array_release(a));
        EXPECT_EQ(released.calls.load(), 1) << "on_release runs once, at the last release";
        // Not destroyed: the driver still knows it.
        gpu::ScopedContext scope(primary_);
        CUDA_ARRAY3D_DESCRIPTOR back{};
        CU_EXPECT_OK(gpu::cu().Array3DGetDescriptor(&back, raw));
        EXPECT_EQ(back.Width, r.d.Width);
        CU_EXPECT_OK(gpu::cu().ArrayDestroy(raw));
    }
    cucore_opaque_array_t *a = nullptr;
    CUCORE_EXPECT_STATUS(cucore_opaque_array_from_handle(dev_, nullptr, nullptr, nullptr, &a),
                         CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(a, nullptr);

    // A foreign mipmapped array: its level count is found.
    CUmipmappedArray raw_m = nullptr;
    {
        gpu::ScopedContext scope(primary_);
        const CUDA_ARRAY3D_DESCRIPTOR d = descriptor(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0);
        CU_ASSERT_OK(gpu::cu().MipmappedArrayCreate(&raw_m, &d, 3));
    }
    gpu::ReleaseCounter released;
    cucore_mipmapped_array_t *m = nullptr;
    CUCORE_ASSERT_OK(cucore_mipmapped_array_from_handle(dev_, raw_m, gpu::ReleaseCounter::callback, &released, &m));
    const cucore_opaque_array_info_t mi = arr::info(m);
    EXPECT_EQ(mi.num_levels, 3u);
    EXPECT_EQ(mi.is_owned, 0u);
    cucore_opaque_array_t *level = nullptr;
    CUCORE_ASSERT_OK(cucore_mipmapped_array_level(m, 2, &level));
    EXPECT_EQ(arr::info(level).width, 4u);
    cucore_opaque_array_t *past = nullptr;
    CUCORE_EXPECT_STATUS(cucore_mipmapped_array_level(m, 3, &past), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_message(), "3")) << last_message();
    EXPECT_EQ(past, nullptr);
    CUCORE_EXPECT_OK(cucore_mipmapped_array_release(m));
    EXPECT_EQ(released.calls.load(), 0) << "the level still holds it";
    CUCORE_EXPECT_OK(cucore_opaque_array_release(level));
    EXPECT_EQ(released.calls.load(), 1);
    gpu::ScopedContext scope(primary_);
    CU_EXPECT_OK(gpu::cu().MipmappedArrayDestroy(raw_m));
}

} // namespace
