// Texture and surface objects (texture.h, texture.hpp) on a real GPU: kernels
// compiled with NVRTC sample textures and write surfaces, and every result is
// compared with the value computed on the host from the data and the sampling
// rules: point and linear filtering (coordinates chosen so that the texture
// unit's 8-bit fractional weights are exact: texel centres plus multiples of
// 1/256, and data whose interpolations need few bits), each address mode at
// out-of-range normalized coordinates, normalized-float reads of 8- and 16-bit
// integers, explicit level-of-detail sampling of a mipmapped array, 1D/2D
// layered and cubemap fetches, linear and pitched-2D textures over buffers,
// surface writes read back through copies, release orders (a texture outliving
// its array or buffer still samples them), and every error the header names.
// The C ABI is used in most tests, the C++ façade (and launch() with texture
// and surface objects as arguments) in the others.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "array_gpu.hpp"

namespace {

using gpu::Bytes;
using gpu::contains;
using gpu::last_message;
using gpu::Owned;
namespace arr = gpu::arrays;

// Host twins of the kernels' vector types (same size and alignment).
struct F2 {
    float x, y;
};
struct alignas(16) F4 {
    float x, y, z, w;
};
struct alignas(16) U4 {
    std::uint32_t x, y, z, w;
};

const char *const kKernels = R"(
// One thread per sample; n samples.
#define CUCORE_SAMPLE(name, Coord, Out, expr)                                                   \
    extern "C" __global__ void name(cudaTextureObject_t t, const Coord *c, Out *out, unsigned n) { \
        const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;                              \
        if (i < n) {                                                                           \
            const Coord p = c[i];                                                              \
            out[i] = expr;                                                                     \
        }                                                                                      \
    }
CUCORE_SAMPLE(tex1d_f1, float, float, tex1D<float>(t, p))
CUCORE_SAMPLE(tex1d_f4, float, float4, tex1D<float4>(t, p))
CUCORE_SAMPLE(tex1d_u4, float, uint4, tex1D<uint4>(t, p))
CUCORE_SAMPLE(tex2d_f1, float2, float, tex2D<float>(t, p.x, p.y))
CUCORE_SAMPLE(tex3d_f1, float4, float, tex3D<float>(t, p.x, p.y, p.z))
CUCORE_SAMPLE(tex1dlayered_f1, float2, float, tex1DLayered<float>(t, p.x, static_cast<int>(p.y)))
CUCORE_SAMPLE(tex2dlayered_f1, float4, float, tex2DLayered<float>(t, p.x, p.y, static_cast<int>(p.z)))
CUCORE_SAMPLE(texcube_f1, float4, float, texCubemap<float>(t, p.x, p.y, p.z))
CUCORE_SAMPLE(texcubelayered_f1, float4, float, texCubemapLayered<float>(t, p.x, p.y, p.z, static_cast<int>(p.w)))
CUCORE_SAMPLE(tex2dlod_f1, float4, float, tex2DLod<float>(t, p.x, p.y, p.z))
CUCORE_SAMPLE(fetch_f1, int, float, tex1Dfetch<float>(t, p))
CUCORE_SAMPLE(fetch_f4, int, float4, tex1Dfetch<float4>(t, p))
CUCORE_SAMPLE(fetch_u1, int, unsigned, tex1Dfetch<unsigned>(t, p))

// Surfaces: element i of a w x h array of 32-bit words is (i % w, i / w).
extern "C" __global__ void surf_write(cudaSurfaceObject_t s, unsigned w, unsigned h, unsigned seed) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h) surf2Dwrite((i % w) * 131u + (i / w) * 7919u + seed, s, (i % w) * 4, i / w);
}
extern "C" __global__ void surf_read(cudaSurfaceObject_t s, unsigned w, unsigned h, unsigned *out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h) out[i] = surf2Dread<unsigned>(s, (i % w) * 4, i / w);
}
)";

std::uint32_t surface_value(std::uint32_t x, std::uint32_t y, std::uint32_t seed) {
    return x * 131u + y * 7919u + seed;
}

// ---- Host models of the texture unit --------------------------------------------------------

// The filter weight the texture unit uses: the fraction in fixed point with 8
// fractional bits (9-bit weights, 1/256 steps). The tests' coordinates have
// fractions that are multiples of 1/256, so rounding direction does not matter.
double weight(double fraction) { return std::floor(fraction * 256.0 + 0.5) / 256.0; }

std::int64_t clamp_index(std::int64_t i, std::int64_t n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// Linear filtering of a clamped 1D texture at unnormalized x.
double linear_1d(const std::vector<float> &t, double x) {
    const double xb = x - 0.5, fl = std::floor(xb), a = weight(xb - fl);
    const auto n = static_cast<std::int64_t>(t.size());
    const auto i = static_cast<std::int64_t>(fl);
    return (1 - a) * t[clamp_index(i, n)] + a * t[clamp_index(i + 1, n)];
}

// Bilinear filtering of a clamped w x h texture (row-major) at unnormalized (x, y).
double linear_2d(const std::vector<float> &t, std::int64_t w, std::int64_t h, double x, double y) {
    const double xb = x - 0.5, yb = y - 0.5, fx = std::floor(xb), fy = std::floor(yb);
    const double a = weight(xb - fx), b = weight(yb - fy);
    const auto i = static_cast<std::int64_t>(fx), j = static_cast<std::int64_t>(fy);
    auto at = [&](std::int64_t xi, std::int64_t yj) {
        return static_cast<double>(t[static_cast<std::size_t>(clamp_index(yj, h) * w + clamp_index(xi, w))]);
    };
    return (1 - a) * (1 - b) * at(i, j) + a * (1 - b) * at(i + 1, j) + (1 - a) * b * at(i, j + 1) +
           a * b * at(i + 1, j + 1);
}

// Point sampling of a 1D texture of n texels at normalized u with `mode`
// (BORDER: -1 for "the border colour").
std::int64_t point_index(cucore_address_mode_t mode, double u, std::int64_t n) {
    switch (mode) {
    case CUCORE_ADDRESS_MODE_WRAP: u -= std::floor(u); break;
    case CUCORE_ADDRESS_MODE_MIRROR: {
        double m = u - 2.0 * std::floor(u / 2.0);
        if (m >= 1.0) m = 2.0 - m;
        u = m;
        break;
    }
    case CUCORE_ADDRESS_MODE_BORDER:
        if (u < 0.0 || u >= 1.0) return -1;
        break;
    default: break;
    }
    return clamp_index(static_cast<std::int64_t>(std::floor(u * static_cast<double>(n))), n);
}

// ---- The fixture ------------------------------------------------------------------------------

class TextureGpuTest : public gpu::CompileTest {
protected:
    void SetUp() override {
        CompileTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        code_ = compile(kKernels);
        ASSERT_TRUE(code_);
        s_ = stream_.get();
    }
    void TearDown() override {
        code_.reset();
        CompileTest::TearDown();
    }

    Owned<cucore_texture_object_t> texture(const cucore_resource_descriptor_t &r,
                                           const cucore_texture_object_options_t &o) {
        cucore_texture_object_t *t = nullptr;
        EXPECT_EQ(cucore_texture_object_create(nullptr, &r, &o, &t), CUCORE_SUCCESS) << last_message();
        return Owned<cucore_texture_object_t>(t);
    }
    static std::uint64_t handle(const cucore_texture_object_t *t) {
        std::uint64_t h = 0;
        EXPECT_EQ(cucore_texture_object_handle(t, &h), CUCORE_SUCCESS) << last_message();
        return h;
    }
    static cucore_resource_descriptor_t over(cucore_opaque_array_t *a) {
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
        r.array = a;
        return r;
    }
    static cucore_texture_object_options_t sampling(cucore_filter_mode_t filter = CUCORE_FILTER_MODE_POINT,
                                                    bool normalized = false,
                                                    cucore_read_mode_t read = CUCORE_READ_MODE_ELEMENT_TYPE) {
        cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
        o.filter_mode = filter;
        o.normalized_coords = normalized ? 1u : 0u;
        o.read_mode = read;
        return o;
    }

    // Runs the sampling kernel `name` over `coords` with a texture (or surface) handle.
    template <typename Out, typename Coord>
    std::vector<Out> sample(const char *name, std::uint64_t tex, const std::vector<Coord> &coords) {
        Owned<cucore_kernel_t> k = kernel(code_.get(), name);
        if (!k) return {};
        auto in = array(coords);
        auto out = array<Out>(coords.size());
        const auto n = static_cast<unsigned>(coords.size());
        EXPECT_EQ(gpu::launch(s_, gpu::config((n + 127) / 128, 128), k.get(), tex,
                              static_cast<const Coord *>(in.ptr()), static_cast<Out *>(out.ptr()), n),
                  CUCORE_SUCCESS)
            << name << ": " << last_message();
        return out.download();
    }
    template <typename Out, typename Coord>
    std::vector<Out> sample(const char *name, const cucore_texture_object_t *t, const std::vector<Coord> &coords) {
        return sample<Out>(name, handle(t), coords);
    }

    // Writes surface_value(x, y, seed) into the w x h surface with a kernel.
    void surface_write(std::uint64_t surface, unsigned w, unsigned h, unsigned seed) {
        Owned<cucore_kernel_t> k = kernel(code_.get(), "surf_write");
        ASSERT_TRUE(k);
        CUCORE_ASSERT_OK(gpu::launch(s_, gpu::config((w * h + 127) / 128, 128), k.get(), surface, w, h, seed));
    }
    // Reads the w x h surface with a kernel.
    std::vector<std::uint32_t> surface_read(std::uint64_t surface, unsigned w, unsigned h) {
        Owned<cucore_kernel_t> k = kernel(code_.get(), "surf_read");
        if (!k) return {};
        auto out = array<std::uint32_t>(w * h);
        EXPECT_EQ(gpu::launch(s_, gpu::config((w * h + 127) / 128, 128), k.get(), surface, w, h,
                              static_cast<std::uint32_t *>(out.ptr())),
                  CUCORE_SUCCESS)
            << last_message();
        return out.download();
    }
    static std::vector<std::uint32_t> surface_pattern(unsigned w, unsigned h, unsigned seed) {
        std::vector<std::uint32_t> v(w * h);
        for (unsigned y = 0; y < h; ++y)
            for (unsigned x = 0; x < w; ++x) v[y * w + x] = surface_value(x, y, seed);
        return v;
    }

    Owned<cucore_buffer_t> buffer(std::uint64_t size) {
        cucore_buffer_t *b = nullptr;
        EXPECT_EQ(cucore_device_allocate(dev_, size, s_, &b), CUCORE_SUCCESS) << last_message();
        return Owned<cucore_buffer_t>(b);
    }
    // A view of `size` bytes of `b` whose address is a multiple of `align`
    // (plus `misalign`): pool allocations need not meet the texture alignment.
    Owned<cucore_buffer_t> aligned_view(cucore_buffer_t *b, std::uint64_t size, std::uint64_t align,
                                        std::uint64_t misalign = 0) {
        const std::uint64_t address = gpu::address_of(b);
        const std::uint64_t offset = (align - address % align) % align + misalign;
        cucore_buffer_t *v = nullptr;
        EXPECT_EQ(cucore_buffer_view(b, offset, size, &v), CUCORE_SUCCESS) << last_message();
        return Owned<cucore_buffer_t>(v);
    }
    void write(cucore_buffer_t *b, const void *data, std::uint64_t size) {
        EXPECT_EQ(cucore_buffer_copy_from_host(b, 0, data, size, s_), CUCORE_SUCCESS) << last_message();
        EXPECT_EQ(cucore_stream_synchronize(s_), CUCORE_SUCCESS) << last_message();
    }

    Owned<cucore_object_code_t> code_;
    cucore_stream_t *s_ = nullptr;
};

// ---- Filtering --------------------------------------------------------------------------------

// Point and linear filtering of a 1D float texture at unnormalized coordinates.
TEST_F(TextureGpuTest, PointAndLinearFiltering1D) {
    const std::vector<float> t = {0, 64, 128, 32, 256, 16, 48, 512};
    Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8));
    ASSERT_TRUE(a);
    arr::upload(a.get(), t, s_);
    const cucore_resource_descriptor_t r = over(a.get());

    // Point: anywhere within texel i reads t[i]; outside, the edge (clamp).
    Owned<cucore_texture_object_t> point = texture(r, sampling(CUCORE_FILTER_MODE_POINT));
    ASSERT_TRUE(point);
    std::vector<float> xs;
    std::vector<float> want;
    for (int i = 0; i < 8; ++i)
        for (float off : {0.1f, 0.5f, 0.9f}) {
            xs.push_back(static_cast<float>(i) + off);
            want.push_back(t[static_cast<std::size_t>(i)]);
        }
    xs.push_back(-5.0f);
    want.push_back(t[0]);
    xs.push_back(100.0f);
    want.push_back(t[7]);
    EXPECT_EQ(sample<float>("tex1d_f1", point.get(), xs), want);

    // Linear: between texel centres at quarter and 1/256 steps, and at both edges.
    Owned<cucore_texture_object_t> linear = texture(r, sampling(CUCORE_FILTER_MODE_LINEAR));
    ASSERT_TRUE(linear);
    xs.clear();
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 4; ++k) xs.push_back(static_cast<float>(i) + 0.5f + 0.25f * static_cast<float>(k));
    for (float x : {0.25f, 0.0f, 2.5f + 37.0f / 256.0f, 3.5f + 200.0f / 256.0f, 5.5f + 1.0f / 256.0f, 7.9f})
        xs.push_back(x);
    const std::vector<float> got = sample<float>("tex1d_f1", linear.get(), xs);
    ASSERT_EQ(got.size(), xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        if (xs[i] == 7.9f) continue; // 7.9 - 0.5 is not a multiple of 1/256; covered by the clamp below
        EXPECT_EQ(got[i], static_cast<float>(linear_1d(t, xs[i]))) << "x = " << xs[i];
    }
    EXPECT_EQ(got.back(), t[7]) << "beyond the last centre both taps are the edge texel";
}

// Bilinear filtering of a 2D float texture, unnormalized and normalized
// coordinates, through the C++ façade (launch() passes the TextureObject).
TEST_F(TextureGpuTest, BilinearFiltering2DThroughTheFacade) {
    const std::int64_t w = 8, h = 4;
    std::vector<float> t(static_cast<std::size_t>(w * h));
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) t[static_cast<std::size_t>(y * w + x)] = 16.0f * static_cast<float>((x * 5 + y * 3) % 8);
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = cucore::Stream::borrow(s_);
    cucore::OpaqueArrayOptions ao;
    ao.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    ao.num_channels = 1;
    ao.width = static_cast<std::uint64_t>(w);
    ao.height = static_cast<std::uint64_t>(h);
    const cucore::OpaqueArray image = dev.create_opaque_array(ao);
    image.copy_from(t, s);
    cucore::TextureObjectOptions to;
    to.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    const cucore::TextureObject tex =
        dev.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(image), to);
    to.normalized_coords = true;
    const cucore::TextureObject normalized =
        cucore::TextureObject::create(cucore::ResourceDescriptor::from_opaque_array(image), to);

    std::vector<F2> pixel, unit;
    std::vector<float> want;
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x)
            for (int ky = 0; ky < 4; ++ky)
                for (int kx = 0; kx < 4; ++kx) {
                    const float fx = static_cast<float>(x) + 0.5f + 0.25f * static_cast<float>(kx);
                    const float fy = static_cast<float>(y) + 0.5f + 0.25f * static_cast<float>(ky);
                    pixel.push_back({fx, fy});
                    unit.push_back({fx / static_cast<float>(w), fy / static_cast<float>(h)});
                    want.push_back(static_cast<float>(linear_2d(t, w, h, fx, fy)));
                }
    const cucore::Kernel k = cucore::Kernel::adopt(kernel(code_.get(), "tex2d_f1").release());
    const auto n = static_cast<unsigned>(pixel.size());
    const cucore::Buffer coords = dev.allocate(n * sizeof(F2), s);
    const cucore::Buffer out = dev.allocate(n * sizeof(float), s);
    std::vector<float> got(n);
    const cucore::LaunchConfig config((n + 127) / 128, 128);
    coords.copy_from_host(pixel, s);
    cucore::launch(s, config, k, tex, coords, out, n);
    out.copy_to_host(got, s);
    s.synchronize();
    EXPECT_EQ(got, want) << "unnormalized";
    coords.copy_from_host(unit, s);
    cucore::launch(s, config, k, normalized, coords, out, n);
    out.copy_to_host(got, s);
    s.synchronize();
    EXPECT_EQ(got, want) << "normalized";
}

// ---- Address modes -------------------------------------------------------------------------------

// Each address mode at out-of-range normalized coordinates (1D), per dimension
// (2D), and clamp and border at unnormalized coordinates.
TEST_F(TextureGpuTest, EachAddressMode) {
    const std::vector<float> t = {10, 20, 30, 40, 50, 60, 70, 80};
    Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8));
    ASSERT_TRUE(a);
    arr::upload(a.get(), t, s_);
    const float border = 42.5f;
    // Texel centres inside and outside [0, 1), in several periods.
    std::vector<float> us;
    for (int i = 0; i < 8; ++i) us.push_back((static_cast<float>(i) + 0.5f) / 8.0f);
    for (float u : {-2.5f / 8, 1 + 2.5f / 8, 2 + 6.5f / 8, -1 - 1.5f / 8, -3 + 0.5f / 8, 5 + 7.5f / 8}) us.push_back(u);
    for (cucore_address_mode_t mode : {CUCORE_ADDRESS_MODE_CLAMP, CUCORE_ADDRESS_MODE_WRAP, CUCORE_ADDRESS_MODE_MIRROR,
                                       CUCORE_ADDRESS_MODE_BORDER}) {
        SCOPED_TRACE("address mode " + std::to_string(static_cast<int>(mode)));
        cucore_texture_object_options_t o = sampling(CUCORE_FILTER_MODE_POINT, true);
        o.address_mode[0] = mode;
        o.border_color[0] = border;
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), o);
        ASSERT_TRUE(tex);
        const std::vector<float> got = sample<float>("tex1d_f1", tex.get(), us);
        ASSERT_EQ(got.size(), us.size());
        for (std::size_t i = 0; i < us.size(); ++i) {
            const std::int64_t texel = point_index(mode, us[i], 8);
            EXPECT_EQ(got[i], texel < 0 ? border : t[static_cast<std::size_t>(texel)]) << "u = " << us[i];
        }
    }
    // Per dimension: x wraps, y has a border.
    std::vector<float> t2(16);
    for (int i = 0; i < 16; ++i) t2[static_cast<std::size_t>(i)] = 10.0f * static_cast<float>(i + 1);
    Owned<cucore_opaque_array_t> a2 = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 4, 4));
    ASSERT_TRUE(a2);
    arr::upload(a2.get(), t2, s_);
    cucore_texture_object_options_t o2 = sampling(CUCORE_FILTER_MODE_POINT, true);
    o2.address_mode[0] = CUCORE_ADDRESS_MODE_WRAP;
    o2.address_mode[1] = CUCORE_ADDRESS_MODE_BORDER;
    o2.border_color[0] = border;
    Owned<cucore_texture_object_t> tex2 = texture(over(a2.get()), o2);
    ASSERT_TRUE(tex2);
    const std::vector<F2> uv = {{1 + 1.5f / 4, 2.5f / 4}, {-0.5f / 4, 0.5f / 4}, {1.5f / 4, 1 + 0.5f / 4},
                                {2.5f / 4, -1.5f / 4}, {-2 + 3.5f / 4, 3.5f / 4}};
    const std::vector<float> want2 = {t2[2 * 4 + 1], t2[0 * 4 + 3], border, border, t2[3 * 4 + 3]};
    EXPECT_EQ(sample<float>("tex2d_f1", tex2.get(), uv), want2);
    // Unnormalized coordinates: clamp and border.
    const std::vector<float> xs = {-3.0f, 0.5f, 7.5f, 8.5f, 100.0f};
    Owned<cucore_texture_object_t> clamp = texture(over(a.get()), sampling(CUCORE_FILTER_MODE_POINT, false));
    cucore_texture_object_options_t ob = sampling(CUCORE_FILTER_MODE_POINT, false);
    ob.address_mode[0] = CUCORE_ADDRESS_MODE_BORDER;
    ob.border_color[0] = border;
    Owned<cucore_texture_object_t> bordered = texture(over(a.get()), ob);
    ASSERT_TRUE(clamp && bordered);
    EXPECT_EQ(sample<float>("tex1d_f1", clamp.get(), xs), (std::vector<float>{10, 10, 80, 80, 80}));
    EXPECT_EQ(sample<float>("tex1d_f1", bordered.get(), xs), (std::vector<float>{border, 10, 80, border, border}));
}

// ---- Read modes -----------------------------------------------------------------------------------

// 8- and 16-bit integers, unsigned and signed, read as normalized floats:
// v / (2^n - 1) unsigned, max(v / (2^(n-1) - 1), -1) signed; and element-type
// reads of the same data as integers.
TEST_F(TextureGpuTest, NormalizedFloatReadsOf8And16BitData) {
    struct Case {
        const char *what;
        cucore_array_format_t format;
        std::vector<std::int64_t> values;
        double scale;   // 2^n - 1 or 2^(n-1) - 1
        std::size_t bytes;
    };
    std::vector<std::int64_t> u8, s8;
    for (int v = 0; v < 256; ++v) u8.push_back(v);
    for (int v = -128; v < 128; ++v) s8.push_back(v);
    const std::vector<Case> cases = {
        {"uint8", CUCORE_ARRAY_FORMAT_UINT8, u8, 255.0, 1},
        {"int8", CUCORE_ARRAY_FORMAT_INT8, s8, 127.0, 1},
        {"uint16", CUCORE_ARRAY_FORMAT_UINT16, {0, 1, 2, 255, 256, 32767, 32768, 65534, 65535}, 65535.0, 2},
        {"int16", CUCORE_ARRAY_FORMAT_INT16, {-32768, -32767, -256, -1, 0, 1, 16384, 32766, 32767}, 32767.0, 2},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        const std::size_t n = c.values.size();
        Bytes data(n * c.bytes);
        for (std::size_t i = 0; i < n; ++i) {
            if (c.bytes == 1) {
                data[i] = static_cast<std::uint8_t>(c.values[i] & 0xFF);
            } else {
                const auto v = static_cast<std::uint16_t>(c.values[i] & 0xFFFF);
                std::memcpy(&data[2 * i], &v, 2);
            }
        }
        Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(c.format, 1, n));
        ASSERT_TRUE(a);
        arr::upload(a.get(), data.data(), data.size(), s_);
        Owned<cucore_texture_object_t> tex =
            texture(over(a.get()), sampling(CUCORE_FILTER_MODE_POINT, false, CUCORE_READ_MODE_NORMALIZED_FLOAT));
        ASSERT_TRUE(tex);
        std::vector<float> xs;
        for (std::size_t i = 0; i < n; ++i) xs.push_back(static_cast<float>(i) + 0.5f);
        const std::vector<float> got = sample<float>("tex1d_f1", tex.get(), xs);
        ASSERT_EQ(got.size(), n);
        for (std::size_t i = 0; i < n; ++i) {
            const double want = std::max(static_cast<double>(c.values[i]) / c.scale, -1.0);
            if (want == 0.0 || want == 1.0 || want == -1.0)
                EXPECT_EQ(got[i], static_cast<float>(want)) << "value " << c.values[i];
            else
                EXPECT_FLOAT_EQ(got[i], static_cast<float>(want)) << "value " << c.values[i];
        }
    }
    // Four channels: RGBA8 as float4 in [0, 1], and as integers (element type).
    const std::vector<std::uint8_t> rgba = {0, 51, 102, 255, 255, 128, 1, 17};
    Owned<cucore_opaque_array_t> a4 = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT8, 4, 2));
    ASSERT_TRUE(a4);
    arr::upload(a4.get(), rgba, s_);
    Owned<cucore_texture_object_t> unit =
        texture(over(a4.get()), sampling(CUCORE_FILTER_MODE_POINT, false, CUCORE_READ_MODE_NORMALIZED_FLOAT));
    Owned<cucore_texture_object_t> element = texture(over(a4.get()), sampling());
    ASSERT_TRUE(unit && element);
    const std::vector<float> xs = {0.5f, 1.5f};
    const std::vector<F4> f = sample<F4>("tex1d_f4", unit.get(), xs);
    const std::vector<U4> u = sample<U4>("tex1d_u4", element.get(), xs);
    ASSERT_EQ(f.size(), 2u);
    ASSERT_EQ(u.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        const float *fc = &f[i].x;
        const std::uint32_t *uc = &u[i].x;
        for (std::size_t c = 0; c < 4; ++c) {
            EXPECT_FLOAT_EQ(fc[c], static_cast<float>(rgba[i * 4 + c] / 255.0)) << "texel " << i << " channel " << c;
            EXPECT_EQ(uc[c], rgba[i * 4 + c]) << "texel " << i << " channel " << c;
        }
    }
}

// ---- Mipmaps --------------------------------------------------------------------------------------

// Explicit level-of-detail sampling: each level holds its own value; point
// mipmap filtering picks the level, linear blends two, the clamps bound it.
TEST_F(TextureGpuTest, ExplicitLevelOfDetailSamplingOfAMipmappedArray) {
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = cucore::Stream::borrow(s_);
    const std::uint32_t levels = 6; // 32 x 16: 1 + log2(32)
    const cucore::MipmappedArray m =
        dev.create_mipmapped_array({CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 32, 16}, levels);
    for (std::uint32_t l = 0; l < levels; ++l) {
        const cucore::OpaqueArray level = m.level(l);
        const cucore::OpaqueArrayInfo i = level.info();
        level.copy_from(std::vector<float>(i.width * i.height, 100.0f + static_cast<float>(l)), s);
    }
    s.synchronize();
    cucore::TextureObjectOptions o;
    o.normalized_coords = true;
    o.max_mipmap_level_clamp = static_cast<float>(levels - 1);
    const cucore::ResourceDescriptor r = cucore::ResourceDescriptor::from_mipmapped_array(m);
    const cucore::TextureObject point = dev.create_texture_object(r, o);
    o.mipmap_filter_mode = CUCORE_FILTER_MODE_LINEAR;
    const cucore::TextureObject linear = dev.create_texture_object(r, o);
    o.mipmap_filter_mode = CUCORE_FILTER_MODE_POINT;
    o.min_mipmap_level_clamp = 2.0f;
    o.max_mipmap_level_clamp = 4.0f;
    const cucore::TextureObject clamped = dev.create_texture_object(r, o);

    std::vector<F4> at;
    for (float lod : {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 7.0f, -1.0f}) at.push_back({0.3f, 0.6f, lod, 0.0f});
    EXPECT_EQ(sample<float>("tex2dlod_f1", point.handle(), at),
              (std::vector<float>{100, 101, 102, 103, 104, 105, 105, 100}));
    EXPECT_EQ(sample<float>("tex2dlod_f1", clamped.handle(), at),
              (std::vector<float>{102, 102, 102, 103, 104, 104, 104, 102}));
    std::vector<F4> between;
    for (float lod : {0.5f, 1.25f, 3.75f}) between.push_back({0.3f, 0.6f, lod, 0.0f});
    EXPECT_EQ(sample<float>("tex2dlod_f1", linear.handle(), between), (std::vector<float>{100.5f, 101.25f, 103.75f}));
}

// ---- Layered and cubemap textures -----------------------------------------------------------------

TEST_F(TextureGpuTest, LayeredAndCubemapFetches) {
    // 1D layered: 16 texels x 3 layers, t = 1000 layer + x.
    {
        const cucore_opaque_array_options_t o =
            arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 0, 0, CUCORE_ARRAY_KIND_LAYERED, 3);
        Owned<cucore_opaque_array_t> a = arr::create(dev_, o);
        ASSERT_TRUE(a);
        std::vector<float> t;
        for (int l = 0; l < 3; ++l)
            for (int x = 0; x < 16; ++x) t.push_back(1000.0f * static_cast<float>(l) + static_cast<float>(x));
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling());
        ASSERT_TRUE(tex);
        std::vector<F2> at;
        std::vector<float> want;
        for (int l = 0; l < 3; ++l)
            for (int x : {0, 7, 15}) {
                at.push_back({static_cast<float>(x) + 0.5f, static_cast<float>(l)});
                want.push_back(1000.0f * static_cast<float>(l) + static_cast<float>(x));
            }
        EXPECT_EQ(sample<float>("tex1dlayered_f1", tex.get(), at), want) << "1D layered";
    }
    // 2D layered: 8 x 4 x 3 layers, t = 1000 layer + 10 y + x.
    {
        const cucore_opaque_array_options_t o =
            arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8, 4, 0, CUCORE_ARRAY_KIND_LAYERED, 3);
        Owned<cucore_opaque_array_t> a = arr::create(dev_, o);
        ASSERT_TRUE(a);
        std::vector<float> t;
        for (int l = 0; l < 3; ++l)
            for (int y = 0; y < 4; ++y)
                for (int x = 0; x < 8; ++x) t.push_back(static_cast<float>(1000 * l + 10 * y + x));
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling());
        ASSERT_TRUE(tex);
        std::vector<F4> at;
        std::vector<float> want;
        for (int l = 0; l < 3; ++l)
            for (int y : {0, 3})
                for (int x : {1, 6}) {
                    at.push_back({static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f, static_cast<float>(l), 0});
                    want.push_back(static_cast<float>(1000 * l + 10 * y + x));
                }
        EXPECT_EQ(sample<float>("tex2dlayered_f1", tex.get(), at), want) << "2D layered";
    }
    // 3D: 4 x 4 x 4, t = 100 z + 10 y + x, at texel centres.
    {
        Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 4, 4, 4));
        ASSERT_TRUE(a);
        std::vector<float> t;
        for (int z = 0; z < 4; ++z)
            for (int y = 0; y < 4; ++y)
                for (int x = 0; x < 4; ++x) t.push_back(static_cast<float>(100 * z + 10 * y + x));
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling());
        ASSERT_TRUE(tex);
        std::vector<F4> at;
        std::vector<float> want;
        for (int z : {0, 2, 3})
            for (int y : {1, 3})
                for (int x : {0, 2}) {
                    at.push_back({x + 0.5f, y + 0.5f, z + 0.5f, 0});
                    want.push_back(static_cast<float>(100 * z + 10 * y + x));
                }
        EXPECT_EQ(sample<float>("tex3d_f1", tex.get(), at), want) << "3D";
    }
    // Cubemap: face f holds 10 (f + 1) everywhere; a direction whose major axis
    // is +X, -X, +Y, -Y, +Z, -Z reads faces 0..5.
    const std::vector<F4> directions = {{1, 0, 0, 0},     {-1, 0, 0, 0},    {0, 1, 0, 0},     {0, -1, 0, 0},
                                        {0, 0, 1, 0},     {0, 0, -1, 0},    {1, 0.3f, -0.2f, 0}, {-0.9f, 0.5f, 0.4f, 0},
                                        {0.2f, 1, -0.7f, 0}, {0.1f, -0.8f, 0.6f, 0}, {-0.5f, 0.5f, 1, 0}, {0.3f, 0.3f, -0.9f, 0}};
    const std::vector<int> faces = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5};
    {
        const cucore_opaque_array_options_t o = arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 4, 4, 0, CUCORE_ARRAY_KIND_CUBEMAP);
        Owned<cucore_opaque_array_t> a = arr::create(dev_, o);
        ASSERT_TRUE(a);
        std::vector<float> t;
        for (int f = 0; f < 6; ++f) t.insert(t.end(), 16, 10.0f * static_cast<float>(f + 1));
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling(CUCORE_FILTER_MODE_POINT, true));
        cucore_texture_object_options_t seamless = sampling(CUCORE_FILTER_MODE_LINEAR);
        seamless.seamless_cubemap = 1;
        seamless.normalized_coords = 1;
        Owned<cucore_texture_object_t> tex_seamless = texture(over(a.get()), seamless);
        ASSERT_TRUE(tex && tex_seamless);
        std::vector<float> want;
        for (int f : faces) want.push_back(10.0f * static_cast<float>(f + 1));
        EXPECT_EQ(sample<float>("texcube_f1", tex.get(), directions), want) << "cubemap";
        // Face centres are away from the edges: seamless linear filtering reads the face alone.
        const std::vector<F4> centres(directions.begin(), directions.begin() + 6);
        EXPECT_EQ(sample<float>("texcube_f1", tex_seamless.get(), centres),
                  std::vector<float>(want.begin(), want.begin() + 6))
            << "seamless";
    }
    // Layered cubemap: cubemap l, face f holds 100 l + 10 (f + 1).
    {
        const cucore_opaque_array_options_t o =
            arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 4, 4, 0, CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2);
        Owned<cucore_opaque_array_t> a = arr::create(dev_, o);
        ASSERT_TRUE(a);
        std::vector<float> t;
        for (int l = 0; l < 2; ++l)
            for (int f = 0; f < 6; ++f) t.insert(t.end(), 16, 100.0f * static_cast<float>(l) + 10.0f * static_cast<float>(f + 1));
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling(CUCORE_FILTER_MODE_POINT, true));
        ASSERT_TRUE(tex);
        std::vector<F4> at;
        std::vector<float> want;
        for (int l = 0; l < 2; ++l)
            for (std::size_t i = 0; i < directions.size(); ++i) {
                F4 d = directions[i];
                d.w = static_cast<float>(l);
                at.push_back(d);
                want.push_back(100.0f * static_cast<float>(l) + 10.0f * static_cast<float>(faces[i] + 1));
            }
        EXPECT_EQ(sample<float>("texcubelayered_f1", tex.get(), at), want) << "layered cubemap";
    }
}

// ---- Textures over buffers ----------------------------------------------------------------------

// LINEAR: a buffer read with tex1Dfetch as floats, RGBA8 normalized, uint32;
// PITCH_2D: rows with padding between them, point and bilinear.
TEST_F(TextureGpuTest, LinearAndPitched2DTexturesOverBuffers) {
    const int align = arr::attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
    const int pitch_align = arr::attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
    ASSERT_GT(align, 0);
    ASSERT_GT(pitch_align, 0);
    Owned<cucore_buffer_t> backing = buffer(1 << 20);
    ASSERT_TRUE(backing);
    Owned<cucore_buffer_t> b = aligned_view(backing.get(), 4096 * 4, static_cast<std::uint64_t>(align));
    ASSERT_TRUE(b);
    std::vector<float> values(4096);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 100.0f;
    write(b.get(), values.data(), values.size() * 4);
    std::vector<int> idx = {0, 1, 2, 1000, 2047, 4095};

    cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    r.kind = CUCORE_RESOURCE_KIND_LINEAR;
    r.buffer = b.get();
    r.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    r.num_channels = 1; // size_bytes 0: the whole buffer
    Owned<cucore_texture_object_t> floats = texture(r, sampling());
    ASSERT_TRUE(floats);
    std::vector<float> want;
    for (int i : idx) want.push_back(values[static_cast<std::size_t>(i)]);
    EXPECT_EQ(sample<float>("fetch_f1", floats.get(), idx), want) << "floats";
    // The same bytes as uint32 words, over the first 8 KiB only.
    r.format = CUCORE_ARRAY_FORMAT_UINT32;
    r.size_bytes = 8192;
    Owned<cucore_texture_object_t> words = texture(r, sampling());
    ASSERT_TRUE(words);
    const std::vector<int> widx = {0, 3, 2047};
    std::vector<std::uint32_t> wwant;
    for (int i : widx) {
        std::uint32_t w = 0;
        std::memcpy(&w, &values[static_cast<std::size_t>(i)], 4);
        wwant.push_back(w);
    }
    EXPECT_EQ(sample<std::uint32_t>("fetch_u1", words.get(), widx), wwant) << "uint32";
    // RGBA8 read normalized.
    r.format = CUCORE_ARRAY_FORMAT_UINT8;
    r.num_channels = 4;
    r.size_bytes = 0;
    Owned<cucore_texture_object_t> rgba =
        texture(r, sampling(CUCORE_FILTER_MODE_POINT, false, CUCORE_READ_MODE_NORMALIZED_FLOAT));
    ASSERT_TRUE(rgba);
    const std::vector<F4> px = sample<F4>("fetch_f4", rgba.get(), std::vector<int>{5, 77});
    ASSERT_EQ(px.size(), 2u);
    for (int k = 0; k < 2; ++k) {
        std::uint8_t bytes[4];
        std::memcpy(bytes, &values[static_cast<std::size_t>(k == 0 ? 5 : 77)], 4);
        const float *c = &px[static_cast<std::size_t>(k)].x;
        for (int ch = 0; ch < 4; ++ch) EXPECT_FLOAT_EQ(c[ch], static_cast<float>(bytes[ch] / 255.0)) << k << "," << ch;
    }

    // PITCH_2D: 50 x 20 floats in rows of `pitch` bytes; the padding holds NaNs.
    const std::uint64_t w = 50, h = 20;
    const std::uint64_t pitch = (w * 4 + static_cast<std::uint64_t>(pitch_align) - 1) /
                                static_cast<std::uint64_t>(pitch_align) * static_cast<std::uint64_t>(pitch_align) +
                                static_cast<std::uint64_t>(pitch_align);
    Owned<cucore_buffer_t> pb = aligned_view(backing.get(), pitch * h, static_cast<std::uint64_t>(align), 65536);
    ASSERT_TRUE(pb);
    std::vector<float> rows(pitch / 4 * h, std::numeric_limits<float>::quiet_NaN());
    std::vector<float> image(w * h);
    for (std::uint64_t y = 0; y < h; ++y)
        for (std::uint64_t x = 0; x < w; ++x) {
            image[y * w + x] = static_cast<float>(16 * ((x * 3 + y * 7) % 11));
            rows[y * (pitch / 4) + x] = image[y * w + x];
        }
    write(pb.get(), rows.data(), rows.size() * 4);
    cucore_resource_descriptor_t p = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    p.kind = CUCORE_RESOURCE_KIND_PITCH_2D;
    p.buffer = pb.get();
    p.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    p.num_channels = 1;
    p.width = w;
    p.height = h;
    p.pitch_bytes = pitch;
    Owned<cucore_texture_object_t> pitched = texture(p, sampling());
    Owned<cucore_texture_object_t> pitched_linear = texture(p, sampling(CUCORE_FILTER_MODE_LINEAR));
    ASSERT_TRUE(pitched && pitched_linear);
    std::vector<F2> at;
    std::vector<float> pwant, lwant;
    for (std::uint64_t y : {0u, 7u, 19u})
        for (std::uint64_t x : {0u, 13u, 49u}) {
            at.push_back({static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f});
            pwant.push_back(image[y * w + x]);
        }
    EXPECT_EQ(sample<float>("tex2d_f1", pitched.get(), at), pwant) << "pitched, point";
    std::vector<F2> between;
    for (std::uint64_t y : {2u, 11u})
        for (std::uint64_t x : {4u, 30u})
            for (int k : {1, 2, 3}) {
                const float fx = static_cast<float>(x) + 0.5f + 0.25f * static_cast<float>(k);
                const float fy = static_cast<float>(y) + 0.5f + 0.25f * static_cast<float>(4 - k);
                between.push_back({fx, fy});
                lwant.push_back(static_cast<float>(linear_2d(image, static_cast<std::int64_t>(w),
                                                             static_cast<std::int64_t>(h), fx, fy)));
            }
    EXPECT_EQ(sample<float>("tex2d_f1", pitched_linear.get(), between), lwant) << "pitched, bilinear";
}

// ---- Surfaces -------------------------------------------------------------------------------------

// A kernel writes a surface; copies read the array back; another kernel reads
// the surface. The C++ façade passes SurfaceObject to launch().
TEST_F(TextureGpuTest, SurfaceWritesReadBackThroughCopies) {
    const unsigned w = 64, h = 32;
    Owned<cucore_opaque_array_t> a = arr::create(
        dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT32, 1, w, h, 0, CUCORE_ARRAY_KIND_PLAIN, 0,
                           CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE));
    ASSERT_TRUE(a);
    arr::upload(a.get(), std::vector<std::uint32_t>(w * h, 0), s_);
    const cucore_resource_descriptor_t r = over(a.get());
    cucore_surface_object_t *surface = nullptr;
    CUCORE_ASSERT_OK(cucore_surface_object_create(nullptr, &r, &surface));
    Owned<cucore_surface_object_t> owned(surface);
    std::uint64_t sh = 0;
    CUCORE_ASSERT_OK(cucore_surface_object_handle(surface, &sh));
    EXPECT_NE(sh, 0u);
    surface_write(sh, w, h, 12345);
    EXPECT_EQ(arr::as<std::uint32_t>(arr::download(a.get(), s_)), surface_pattern(w, h, 12345)) << "copy_to_host";
    // Through a buffer too.
    Owned<cucore_buffer_t> b = buffer(w * h * 4);
    ASSERT_TRUE(b);
    CUCORE_ASSERT_OK(cucore_opaque_array_copy_to_buffer(a.get(), b.get(), s_));
    std::vector<std::uint32_t> via(w * h);
    CUCORE_ASSERT_OK(cucore_buffer_copy_to_host(b.get(), 0, via.data(), via.size() * 4, s_));
    CUCORE_ASSERT_OK(cucore_stream_synchronize(s_));
    EXPECT_EQ(via, surface_pattern(w, h, 12345)) << "copy_to_buffer";
    // Data copied in is what the surface reads.
    arr::upload(a.get(), surface_pattern(w, h, 777), s_);
    EXPECT_EQ(surface_read(sh, w, h), surface_pattern(w, h, 777)) << "surf2Dread";

    // The façade: SurfaceObject as a launch argument.
    cucore::Device dev = cucore::Device::get(0);
    cucore::Stream s = cucore::Stream::borrow(s_);
    const cucore::OpaqueArray cpp = dev.create_opaque_array(
        {CUCORE_ARRAY_FORMAT_UINT32, 1, CUCORE_ARRAY_KIND_PLAIN, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE, w, h});
    EXPECT_TRUE(cpp.is_surface_load_store());
    const cucore::SurfaceObject so = dev.create_surface_object(cucore::ResourceDescriptor::from_opaque_array(cpp));
    const cucore::Kernel k = cucore::Kernel::adopt(kernel(code_.get(), "surf_write").release());
    cucore::launch(s, cucore::LaunchConfig((w * h + 127) / 128, 128), k, so, w, h, 99u);
    std::vector<std::uint32_t> got(w * h);
    cpp.copy_to(got, s);
    s.synchronize();
    EXPECT_EQ(got, surface_pattern(w, h, 99));
}

TEST_F(TextureGpuTest, SurfacesNeedALoadStoreArray) {
    Owned<cucore_opaque_array_t> plain = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT32, 1, 16, 16));
    ASSERT_TRUE(plain);
    cucore_resource_descriptor_t r = over(plain.get());
    cucore_surface_object_t *s = nullptr;
    CUCORE_EXPECT_STATUS(cucore_surface_object_create(nullptr, &r, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);
    EXPECT_TRUE(contains(last_message(), "SURFACE_LOAD_STORE")) << last_message();
    // Other resource kinds.
    cucore_mipmapped_array_t *m = nullptr;
    const cucore_opaque_array_options_t mo = arr::options(CUCORE_ARRAY_FORMAT_UINT32, 1, 16, 16, 0,
                                                          CUCORE_ARRAY_KIND_PLAIN, 0, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
    CUCORE_ASSERT_OK(cucore_mipmapped_array_create(dev_, &mo, 2, &m));
    Owned<cucore_mipmapped_array_t> owned_m(m);
    cucore_resource_descriptor_t rm = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    rm.kind = CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
    rm.mipmapped_array = m;
    CUCORE_EXPECT_STATUS(cucore_surface_object_create(nullptr, &rm, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    Owned<cucore_buffer_t> b = buffer(4096);
    cucore_resource_descriptor_t rl = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    rl.kind = CUCORE_RESOURCE_KIND_LINEAR;
    rl.buffer = b.get();
    rl.format = CUCORE_ARRAY_FORMAT_UINT32;
    CUCORE_EXPECT_STATUS(cucore_surface_object_create(nullptr, &rl, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    // A closed load/store array; a closed surface.
    Owned<cucore_opaque_array_t> ls = arr::create(dev_, mo);
    ASSERT_TRUE(ls);
    cucore_resource_descriptor_t rs = over(ls.get());
    CUCORE_ASSERT_OK(cucore_surface_object_create(nullptr, &rs, &s));
    Owned<cucore_surface_object_t> surface(s);
    CUCORE_ASSERT_OK(cucore_surface_object_close(s));
    CUCORE_ASSERT_OK(cucore_surface_object_close(s));
    std::uint64_t h = 1;
    CUCORE_EXPECT_STATUS(cucore_surface_object_handle(s, &h), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(h, 0u);
    CUCORE_ASSERT_OK(cucore_opaque_array_close(ls.get()));
    cucore_surface_object_t *s2 = nullptr;
    CUCORE_EXPECT_STATUS(cucore_surface_object_create(nullptr, &rs, &s2), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(s2, nullptr);
    // The façade throws with the flag named.
    const cucore::OpaqueArray cpp = cucore::OpaqueArray::borrow(plain.get());
    try {
        (void)cucore::SurfaceObject::create(cucore::ResourceDescriptor::from_opaque_array(cpp));
        ADD_FAILURE() << "a surface over an array without surface load/store was made";
    } catch (const cucore::Error &e) {
        EXPECT_EQ(e.status(), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(e.what(), "SURFACE_LOAD_STORE")) << e.what();
    }
}

// ---- Lifetimes --------------------------------------------------------------------------------------

// Release order never matters: a texture outliving its array (released or
// closed), its buffer (closed and released) or its mipmapped array still
// samples their data, and a surface outliving its array still writes it.
TEST_F(TextureGpuTest, TexturesOutliveTheirResources) {
    const std::vector<float> t = {1, 2, 3, 5, 8, 13, 21, 34};
    const std::vector<float> xs = {0.5f, 3.5f, 7.5f};
    const std::vector<float> want = {1, 5, 34};
    // Array released first.
    {
        Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8));
        ASSERT_TRUE(a);
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling());
        ASSERT_TRUE(tex);
        a.reset();
        EXPECT_EQ(sample<float>("tex1d_f1", tex.get(), xs), want) << "array released";
    }
    // Array closed first.
    {
        Owned<cucore_opaque_array_t> a = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8));
        ASSERT_TRUE(a);
        arr::upload(a.get(), t, s_);
        Owned<cucore_texture_object_t> tex = texture(over(a.get()), sampling());
        ASSERT_TRUE(tex);
        CUCORE_ASSERT_OK(cucore_opaque_array_close(a.get()));
        EXPECT_EQ(sample<float>("tex1d_f1", tex.get(), xs), want) << "array closed";
        a.reset();
        EXPECT_EQ(sample<float>("tex1d_f1", tex.get(), xs), want) << "array closed and released";
    }
    // Buffer closed and released under a linear texture.
    {
        const int align = arr::attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
        Owned<cucore_buffer_t> backing = buffer(64 * 1024);
        ASSERT_TRUE(backing);
        Owned<cucore_buffer_t> b = aligned_view(backing.get(), 32, static_cast<std::uint64_t>(align));
        ASSERT_TRUE(b);
        write(b.get(), t.data(), 32);
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_LINEAR;
        r.buffer = b.get();
        r.format = CUCORE_ARRAY_FORMAT_FLOAT32;
        Owned<cucore_texture_object_t> tex = texture(r, sampling());
        ASSERT_TRUE(tex);
        CUCORE_ASSERT_OK(cucore_buffer_close(b.get(), s_));
        b.reset();
        CUCORE_ASSERT_OK(cucore_buffer_close(backing.get(), s_));
        backing.reset();
        // Other allocations may now take freed memory; the texture's must not be among it.
        Owned<cucore_buffer_t> other = buffer(64 * 1024);
        ASSERT_TRUE(other);
        CUCORE_ASSERT_OK(cucore_buffer_fill(other.get(), 0xFFFFFFFFu, 4, s_));
        EXPECT_EQ(sample<float>("fetch_f1", tex.get(), std::vector<int>{0, 3, 7}), want) << "buffer closed";
    }
    // Mipmapped array released under a texture.
    {
        cucore_mipmapped_array_t *m = nullptr;
        const cucore_opaque_array_options_t o = arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8, 8);
        CUCORE_ASSERT_OK(cucore_mipmapped_array_create(dev_, &o, 4, &m));
        Owned<cucore_mipmapped_array_t> owned(m);
        for (std::uint32_t l = 0; l < 4; ++l) {
            cucore_opaque_array_t *level = nullptr;
            CUCORE_ASSERT_OK(cucore_mipmapped_array_level(m, l, &level));
            Owned<cucore_opaque_array_t> lv(level);
            const std::uint64_t side = 8u >> l;
            arr::upload(level, std::vector<float>(side * side, 50.0f + static_cast<float>(l)), s_);
        }
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
        r.mipmapped_array = m;
        cucore_texture_object_options_t o2 = sampling(CUCORE_FILTER_MODE_POINT, true);
        o2.max_mipmap_level_clamp = 3.0f;
        Owned<cucore_texture_object_t> tex = texture(r, o2);
        ASSERT_TRUE(tex);
        owned.reset();
        EXPECT_EQ(sample<float>("tex2dlod_f1", tex.get(), std::vector<F4>{{0.5f, 0.5f, 0, 0}, {0.5f, 0.5f, 3, 0}}),
                  (std::vector<float>{50, 53}))
            << "mipmapped array released";
    }
    // A surface outliving its array.
    {
        Owned<cucore_opaque_array_t> a = arr::create(
            dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT32, 1, 16, 8, 0, CUCORE_ARRAY_KIND_PLAIN, 0,
                               CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE));
        ASSERT_TRUE(a);
        const cucore_resource_descriptor_t r = over(a.get());
        cucore_surface_object_t *surface = nullptr;
        CUCORE_ASSERT_OK(cucore_surface_object_create(nullptr, &r, &surface));
        Owned<cucore_surface_object_t> owned(surface);
        CUCORE_ASSERT_OK(cucore_opaque_array_close(a.get()));
        a.reset();
        std::uint64_t sh = 0;
        CUCORE_ASSERT_OK(cucore_surface_object_handle(surface, &sh));
        surface_write(sh, 16, 8, 5);
        EXPECT_EQ(surface_read(sh, 16, 8), surface_pattern(16, 8, 5)) << "surface over a released array";
    }
    // The C++ façade: the descriptor holds a temporary array, the texture holds it after.
    {
        cucore::Device dev = cucore::Device::get(0);
        cucore::Stream s = cucore::Stream::borrow(s_);
        cucore::TextureObject tex;
        {
            cucore::OpaqueArray a = dev.create_opaque_array({CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_PLAIN, 0, 8});
            a.copy_from(t, s);
            tex = dev.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(a));
        }
        EXPECT_EQ(sample<float>("tex1d_f1", tex.handle(), xs), want) << "façade";
        tex.close();
        CUCORE_EXPECT_THROW_STATUS(tex.handle(), CUCORE_ERROR_INVALID_STATE);
    }
}

// ---- Errors -------------------------------------------------------------------------------------------

TEST_F(TextureGpuTest, TextureCreationErrors) {
    Owned<cucore_opaque_array_t> floats = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 16, 16));
    Owned<cucore_opaque_array_t> bytes = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_UINT8, 4, 16, 16));
    Owned<cucore_opaque_array_t> cube =
        arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_FLOAT32, 1, 8, 8, 0, CUCORE_ARRAY_KIND_CUBEMAP));
    Owned<cucore_opaque_array_t> srgb = arr::create(dev_, arr::options(CUCORE_ARRAY_FORMAT_BC1_UNORM_SRGB, 0, 16, 16));
    ASSERT_TRUE(floats && bytes && cube && srgb);
    const int align = arr::attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
    const int pitch_align = arr::attribute(dev_, CUCORE_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
    Owned<cucore_buffer_t> backing = buffer(1 << 16);
    ASSERT_TRUE(backing);
    Owned<cucore_buffer_t> b = aligned_view(backing.get(), 8192, static_cast<std::uint64_t>(align));
    Owned<cucore_buffer_t> misaligned =
        aligned_view(backing.get(), 8192, static_cast<std::uint64_t>(align), static_cast<std::uint64_t>(align / 2));
    ASSERT_TRUE(b && misaligned);

    auto expect = [&](const cucore_resource_descriptor_t &r, const cucore_texture_object_options_t *o,
                      cucore_status_t want, const char *what) {
        SCOPED_TRACE(what);
        cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(std::uintptr_t{0x10});
        const cucore_status_t s = cucore_texture_object_create(nullptr, &r, o, &t);
        EXPECT_EQ(s, want) << last_message();
        if (s == CUCORE_SUCCESS) {
            cucore_texture_object_release(t);
        } else {
            EXPECT_EQ(t, nullptr);
            EXPECT_FALSE(last_message().empty());
        }
    };
    // A NULL handle in a descriptor is a bad field or a bad handle: either status says so.
    auto expect_refused_handle = [&](const cucore_resource_descriptor_t &r, const char *what) {
        SCOPED_TRACE(what);
        cucore_texture_object_t *t = nullptr;
        const cucore_status_t s = cucore_texture_object_create(nullptr, &r, nullptr, &t);
        EXPECT_TRUE(s == CUCORE_ERROR_INVALID_ARGUMENT || s == CUCORE_ERROR_INVALID_HANDLE)
            << cucore_status_string(s) << ": " << last_message();
        EXPECT_EQ(t, nullptr);
        if (t != nullptr) cucore_texture_object_release(t);
    };
    const cucore_texture_object_options_t dflt = sampling();
    // Filtering integers read as integers; as normalized floats it is fine.
    expect(over(bytes.get()), &dflt, CUCORE_SUCCESS, "uint8 point");
    cucore_texture_object_options_t o = sampling(CUCORE_FILTER_MODE_LINEAR);
    expect(over(bytes.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "linear filtering of integers");
    o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    expect(over(bytes.get()), &o, CUCORE_SUCCESS, "linear filtering of normalized integers");
    expect(over(floats.get()), &o, CUCORE_SUCCESS, "linear filtering of floats");
    // Seamless cubemap filtering of something else.
    o = sampling();
    o.seamless_cubemap = 1;
    o.normalized_coords = 1;
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "seamless over a 2D array");
    expect(over(cube.get()), &o, CUCORE_SUCCESS, "seamless over a cubemap");
    // Anisotropy, non-finite mipmap fields, unknown enums.
    o = sampling();
    o.max_anisotropy = 16;
    expect(over(floats.get()), &o, CUCORE_SUCCESS, "anisotropy 16");
    o.max_anisotropy = 17;
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "anisotropy 17");
    o = sampling();
    o.mipmap_level_bias = std::numeric_limits<float>::quiet_NaN();
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "NaN bias");
    o = sampling();
    o.max_mipmap_level_clamp = std::numeric_limits<float>::infinity();
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "infinite clamp");
    o = sampling();
    o.address_mode[2] = static_cast<cucore_address_mode_t>(4);
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "unknown address mode");
    o = sampling();
    o.filter_mode = static_cast<cucore_filter_mode_t>(2);
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "unknown filter mode");
    o = sampling();
    o.read_mode = static_cast<cucore_read_mode_t>(2);
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "unknown read mode");
    o = sampling();
    o.struct_size = 2; // below the struct_size field itself
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "bad options struct_size");
    o.struct_size = 6; // ends inside address_mode[0]
    expect(over(floats.get()), &o, CUCORE_ERROR_INVALID_ARGUMENT, "options struct_size inside a field");
    // sRGB BC formats need srgb.
    expect(over(srgb.get()), &dflt, CUCORE_ERROR_INVALID_ARGUMENT, "BC1 sRGB without srgb");
    o = sampling();
    o.srgb = 1;
    expect(over(srgb.get()), &o, CUCORE_SUCCESS, "BC1 sRGB with srgb");
    // Descriptors.
    cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    expect(r, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "kind unset");
    r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
    expect_refused_handle(r, "no array");
    r = over(floats.get());
    r.buffer = b.get();
    expect(r, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "a buffer beside the array");
    r = over(floats.get());
    r.struct_size = 6; // ends inside 'kind'
    expect(r, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "bad descriptor struct_size");
    r = over(floats.get());
    r.kind = static_cast<cucore_resource_kind_t>(9);
    expect(r, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "unknown kind");
    // LINEAR.
    cucore_resource_descriptor_t lin = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    lin.kind = CUCORE_RESOURCE_KIND_LINEAR;
    lin.buffer = b.get();
    lin.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    lin.num_channels = 2;
    lin.size_bytes = 8192;
    expect(lin, nullptr, CUCORE_SUCCESS, "linear");
    lin.size_bytes = 8188;
    expect(lin, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "size not a multiple of the element size");
    lin.size_bytes = 8200;
    expect(lin, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "size beyond the buffer");
    lin.size_bytes = 0;
    lin.buffer = misaligned.get();
    expect(lin, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "address off the texture alignment");
    lin.buffer = b.get();
    lin.format = CUCORE_ARRAY_FORMAT_BC1_UNORM;
    lin.num_channels = 0;
    expect(lin, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "BC format over linear memory");
    lin.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    lin.num_channels = 3;
    expect(lin, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "3 channels");
    lin.num_channels = 1;
    lin.buffer = nullptr;
    expect_refused_handle(lin, "no buffer");
    // PITCH_2D.
    const std::uint64_t pa = static_cast<std::uint64_t>(pitch_align);
    cucore_resource_descriptor_t p = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    p.kind = CUCORE_RESOURCE_KIND_PITCH_2D;
    p.buffer = b.get();
    p.format = CUCORE_ARRAY_FORMAT_FLOAT32;
    p.num_channels = 1;
    p.width = 10;
    p.height = 8;
    p.pitch_bytes = (40 + pa - 1) / pa * pa;
    expect(p, nullptr, CUCORE_SUCCESS, "pitched");
    p.pitch_bytes = pa > 1 ? (40 + pa - 1) / pa * pa + 4 : 44;
    if (pa > 4) expect(p, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "pitch off the pitch alignment");
    p.width = 100;
    p.pitch_bytes = pa;
    if (pa < 400) expect(p, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "pitch below width x element size");
    p.width = 10;
    p.pitch_bytes = (40 + pa - 1) / pa * pa;
    p.height = 8192 / p.pitch_bytes + 1;
    expect(p, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "rows beyond the buffer");
    p.height = 8;
    p.buffer = misaligned.get();
    expect(p, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "address off the texture alignment");
    p.buffer = b.get();
    p.width = 0;
    expect(p, nullptr, CUCORE_ERROR_INVALID_ARGUMENT, "width 0");
    // NULL arguments, a closed texture.
    cucore_texture_object_t *t = nullptr;
    CUCORE_EXPECT_STATUS(cucore_texture_object_create(nullptr, nullptr, nullptr, &t), CUCORE_ERROR_INVALID_ARGUMENT);
    const cucore_resource_descriptor_t ok = over(floats.get());
    CUCORE_EXPECT_STATUS(cucore_texture_object_create(nullptr, &ok, nullptr, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_ASSERT_OK(cucore_texture_object_create(dev_, &ok, nullptr, &t));
    Owned<cucore_texture_object_t> tex(t);
    std::uint64_t h = 0;
    CUCORE_EXPECT_STATUS(cucore_texture_object_handle(t, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    CUCORE_ASSERT_OK(cucore_texture_object_handle(t, &h));
    EXPECT_NE(h, 0u);
    CUCORE_ASSERT_OK(cucore_texture_object_close(t));
    CUCORE_ASSERT_OK(cucore_texture_object_close(t));
    CUCORE_EXPECT_STATUS(cucore_texture_object_handle(t, &h), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(h, 0u);
    // Another device than the resource's.
    if (device_count_ > 1) {
        cucore_device_t *d1 = nullptr;
        CUCORE_ASSERT_OK(cucore_device_get(1, &d1));
        Owned<cucore_device_t> dev1(d1);
        cucore_texture_object_t *t1 = nullptr;
        CUCORE_EXPECT_STATUS(cucore_texture_object_create(d1, &ok, nullptr, &t1), CUCORE_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(t1, nullptr);
    }
    // The raw texture object reads the array we gave it.
    CUCORE_ASSERT_OK(cucore_texture_object_create(nullptr, &ok, nullptr, &t));
    Owned<cucore_texture_object_t> tex2(t);
    CUCORE_ASSERT_OK(cucore_texture_object_handle(t, &h));
    CUDA_RESOURCE_DESC rd{};
    {
        gpu::ScopedContext scope(primary_);
        CU_ASSERT_OK(gpu::cu().TexObjectGetResourceDesc(&rd, static_cast<CUtexObject>(h)));
    }
    void *raw_array = nullptr;
    CUCORE_ASSERT_OK(cucore_opaque_array_handle(floats.get(), &raw_array));
    EXPECT_EQ(rd.resType, CU_RESOURCE_TYPE_ARRAY);
    EXPECT_EQ(static_cast<void *>(rd.res.array.hArray), raw_array);
}

} // namespace
