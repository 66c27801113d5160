// texture_upscale (C++ façade, cucore.hpp): a small picture made on the host is
// uploaded to a CUDA array and upscaled 4x by a kernel that samples it through
// two texture objects, one with point filtering and one bilinear (RGBA8 texels
// read as normalized floats), side by side in one PNG:
//
//   cucore::OpaqueArray image = dev.create_opaque_array({CUCORE_ARRAY_FORMAT_UINT8, 4,
//                                                        CUCORE_ARRAY_KIND_PLAIN, 0, w, h});
//   image.copy_from(pixels, stream);
//   cucore::TextureObjectOptions o;
//   o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
//   o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
//   cucore::TextureObject smooth =
//       dev.create_texture_object(cucore::ResourceDescriptor::from_opaque_array(image), o);
//   cucore::launch(stream, config, kernel, blocky, smooth, out, out_w, out_h);
//
// Every output pixel is checked against the texture unit's rules computed on
// the host (point: the texel under the sample; bilinear: 8-bit fractional
// weights, which the coordinates here make exact), within one step of 8 bits.
//
//   texture_upscale [--out FILE.png] [--scale N]   (default texture_upscale_cpp.png; N: 1, 2, 4 or 8, default 4)
//
// Without a GPU or without NVRTC it says so and exits 0.
#include <cucore.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "png_writer.hpp"

namespace {

const char *const kSource = R"(
// Output pixel (x, y) of a 2 out_w x out_h picture: the left half sampled with
// `blocky`, the right half with `smooth`, at the centre of the output pixel in
// the source's texel coordinates (unnormalized).
extern "C" __global__ void upscale(cudaTextureObject_t blocky, cudaTextureObject_t smooth, uchar4 *out,
                                   unsigned out_w, unsigned out_h, float scale) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 2 * out_w || y >= out_h) return;
    const unsigned ox = x < out_w ? x : x - out_w;
    const float u = (ox + 0.5f) / scale, v = (y + 0.5f) / scale;
    const float4 c = tex2D<float4>(x < out_w ? blocky : smooth, u, v);
    out[y * 2 * out_w + x] = make_uchar4(__float2uint_rn(c.x * 255.0f), __float2uint_rn(c.y * 255.0f),
                                         __float2uint_rn(c.z * 255.0f), __float2uint_rn(c.w * 255.0f));
}
)";

constexpr std::uint32_t kWidth = 80, kHeight = 60;

struct Rgba {
    std::uint8_t r, g, b, a;
};

// A small landscape: sky, sun, hills, a house; hard edges, so that point and
// bilinear upscaling look different.
std::vector<Rgba> make_picture() {
    std::vector<Rgba> p(kWidth * kHeight);
    for (std::uint32_t y = 0; y < kHeight; ++y) {
        for (std::uint32_t x = 0; x < kWidth; ++x) {
            const double fx = x, fy = y;
            const double t = fy < 40.0 ? fy / 40.0 : 1.0;
            Rgba c{static_cast<std::uint8_t>(40 + 130 * t), static_cast<std::uint8_t>(90 + 120 * t),
                   static_cast<std::uint8_t>(200 + 55 * t), 255};
            const double sun = std::hypot(fx - 60.0, fy - 14.0);
            if (sun < 6.5)
                c = {255, 220, 80, 255};
            else if (sun < 8.0)
                c = {255, 160, 60, 255};
            const double hill = 40.0 + 5.0 * std::sin(fx * 0.15) + 3.0 * std::sin(fx * 0.41 + 1.0);
            if (fy > hill) c = ((x / 4 + y / 4) % 2 == 0) ? Rgba{40, 150, 60, 255} : Rgba{30, 120, 50, 255};
            // The house: walls, a roof, a window, a door.
            if (x >= 14 && x < 28 && y >= 36 && y < 48) c = {200, 60, 50, 255};
            if (y >= 28 && y < 36 && std::fabs(fx - 21.0) <= (fy - 28.0) * 1.1) c = {110, 40, 30, 255};
            if (x >= 17 && x < 21 && y >= 39 && y < 43) c = {250, 240, 120, 255};
            if (x >= 23 && x < 26 && y >= 41 && y < 48) c = {90, 50, 30, 255};
            p[y * kWidth + x] = c;
        }
    }
    return p;
}

// What the texture unit returns at unnormalized (x, y), as 8-bit values:
// point filtering takes the texel under the sample; bilinear filtering
// weighs the four nearest texels with 8-bit fractional weights (clamped at
// the edges).
Rgba expected(const std::vector<Rgba> &src, double x, double y, bool bilinear) {
    auto at = [&](long i, long j) -> const Rgba & {
        i = i < 0 ? 0 : (i >= static_cast<long>(kWidth) ? static_cast<long>(kWidth) - 1 : i);
        j = j < 0 ? 0 : (j >= static_cast<long>(kHeight) ? static_cast<long>(kHeight) - 1 : j);
        return src[static_cast<std::size_t>(j) * kWidth + static_cast<std::size_t>(i)];
    };
    if (!bilinear) return at(static_cast<long>(std::floor(x)), static_cast<long>(std::floor(y)));
    const double xb = x - 0.5, yb = y - 0.5, fx = std::floor(xb), fy = std::floor(yb);
    const double a = std::floor((xb - fx) * 256.0 + 0.5) / 256.0, b = std::floor((yb - fy) * 256.0 + 0.5) / 256.0;
    const long i = static_cast<long>(fx), j = static_cast<long>(fy);
    const Rgba &c00 = at(i, j), &c10 = at(i + 1, j), &c01 = at(i, j + 1), &c11 = at(i + 1, j + 1);
    auto mix = [&](std::uint8_t v00, std::uint8_t v10, std::uint8_t v01, std::uint8_t v11) {
        const double v = (1 - a) * (1 - b) * v00 + a * (1 - b) * v10 + (1 - a) * b * v01 + a * b * v11;
        return static_cast<std::uint8_t>(std::lround(v));
    };
    return {mix(c00.r, c10.r, c01.r, c11.r), mix(c00.g, c10.g, c01.g, c11.g), mix(c00.b, c10.b, c01.b, c11.b),
            mix(c00.a, c10.a, c01.a, c11.a)};
}

int usage(const char *argv0) {
    std::fprintf(stderr, "usage: %s [--out FILE.png] [--scale 1|2|4|8]\n", argv0);
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    std::string out_path = "texture_upscale_cpp.png";
    std::uint32_t scale = 4;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--out" && i + 1 < argc) {
            out_path = argv[++i];
        } else if (arg == "--scale" && i + 1 < argc) {
            scale = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
            if (scale != 1 && scale != 2 && scale != 4 && scale != 8) return usage(argv[0]);
        } else {
            return usage(argv[0]);
        }
    }
    std::printf("libcucore %s\n", cucore::version_string());
    try {
        int count = 0;
        try {
            count = cucore::Device::count();
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NO_DRIVER) throw;
            std::printf("No CUDA driver here (%s): nothing to upscale. Run this on a machine with an NVIDIA GPU.\n",
                        e.what());
            return 0;
        }
        if (count == 0) {
            std::printf("No GPU here: nothing to upscale. Run this on a machine with an NVIDIA GPU.\n");
            return 0;
        }
        try {
            (void)cucore::compiler_version(CUCORE_BACKEND_NVRTC);
        } catch (const cucore::Error &e) {
            if (e.status() != CUCORE_ERROR_NOT_SUPPORTED) throw;
            std::printf("NVRTC is not installed, so the kernel cannot be compiled here.\n  %s\n", e.what());
            return 0;
        }

        const cucore::Device dev(0);
        std::printf("Device 0: %s\n", std::string(dev.name()).c_str());
        const cucore::Stream stream = dev.create_stream();

        // The picture, in an array of RGBA8 texels.
        const std::vector<Rgba> picture = make_picture();
        cucore::OpaqueArrayOptions ao;
        ao.format = CUCORE_ARRAY_FORMAT_UINT8;
        ao.num_channels = 4;
        ao.width = kWidth;
        ao.height = kHeight;
        const cucore::OpaqueArray image = dev.create_opaque_array(ao);
        image.copy_from(picture, stream);

        // Two texture objects over it: point and bilinear, both reading normalized floats.
        const cucore::ResourceDescriptor resource = cucore::ResourceDescriptor::from_opaque_array(image);
        cucore::TextureObjectOptions to;
        to.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
        const cucore::TextureObject blocky = dev.create_texture_object(resource, to);
        to.filter_mode = CUCORE_FILTER_MODE_LINEAR;
        const cucore::TextureObject smooth = dev.create_texture_object(resource, to);

        // The kernel, for this device.
        cucore::ProgramOptions po; // arch: device 0's
        po.std = "c++17";
        const cucore::Program program = cucore::Program::create(kSource, CUCORE_CODE_CXX, po);
        const cucore::ObjectCode code = program.compile(CUCORE_CODE_CUBIN);
        const cucore::Kernel kernel = code.get_kernel("upscale");

        const std::uint32_t out_w = kWidth * scale, out_h = kHeight * scale;
        const std::uint64_t out_pixels = std::uint64_t{2} * out_w * out_h;
        const cucore::Buffer out = dev.allocate(out_pixels * sizeof(Rgba), stream);
        cucore::LaunchConfig config;
        config.block = {16, 16};
        config.grid = {(2 * out_w + 15) / 16, (out_h + 15) / 16};
        cucore::launch(stream, config, kernel, blocky, smooth, out, out_w, out_h, static_cast<float>(scale));
        std::vector<Rgba> pixels(static_cast<std::size_t>(out_pixels));
        out.copy_to_host(pixels, stream);
        stream.synchronize();

        // Check every pixel against the host's model of the texture unit.
        std::uint64_t wrong = 0;
        int worst = 0;
        for (std::uint32_t y = 0; y < out_h; ++y) {
            for (std::uint32_t x = 0; x < 2 * out_w; ++x) {
                const bool bilinear = x >= out_w;
                const std::uint32_t ox = bilinear ? x - out_w : x;
                const Rgba want = expected(picture, (ox + 0.5) / scale, (y + 0.5) / scale, bilinear);
                const Rgba &got = pixels[static_cast<std::size_t>(y) * 2 * out_w + x];
                const int d = std::max(std::max(std::abs(got.r - want.r), std::abs(got.g - want.g)),
                                       std::max(std::abs(got.b - want.b), std::abs(got.a - want.a)));
                if (d > worst) worst = d;
                if (d > (bilinear ? 1 : 0)) {
                    if (wrong < 5)
                        std::printf("pixel (%u, %u) %s: got (%d, %d, %d, %d), expected (%d, %d, %d, %d)\n", x, y,
                                    bilinear ? "bilinear" : "point", got.r, got.g, got.b, got.a, want.r, want.g,
                                    want.b, want.a);
                    ++wrong;
                }
            }
        }
        if (!png_writer::write_rgba(out_path, &pixels[0].r, 2 * out_w, out_h)) {
            std::fprintf(stderr, "error: cannot write %s: %s\n", out_path.c_str(), std::strerror(errno));
            return 1;
        }
        std::printf("Upscaled %ux%u to %ux%u through two texture objects (left: point, right: bilinear): %s\n", kWidth,
                    kHeight, out_w, out_h, out_path.c_str());
        std::printf("Every pixel against the host's model: %llu off, largest difference %d (of 255)\n",
                    static_cast<unsigned long long>(wrong), worst);
        std::printf(wrong == 0 ? "texture_upscale OK\n" : "texture_upscale FAILED\n");
        return wrong == 0 ? 0 : 1;
    } catch (const cucore::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
