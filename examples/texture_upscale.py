#!/usr/bin/env python3
"""Upscale a picture 4x on the GPU through a bilinear texture, with the cucore Python binding.

    python3 examples/texture_upscale.py [--out texture_upscale.png] [--scale 4]

A small RGBA picture is drawn here (a sky, a sun, hills and a checkered field), copied into a CUDA array
(cucore.OpaqueArray), and read by a kernel compiled at run time (NVRTC) through a texture object with linear
filtering and normalized-float reads: each output pixel samples the picture between its texels, so the
texture units do the bilinear interpolation. The result is copied back, checked against the same
interpolation done here, and written as a PNG (zlib and struct: no imaging library).

Without a GPU (or a CUDA driver, or NVRTC) it says so and exits 0, having written nothing.
"""
import argparse
import os
import pathlib
import struct
import sys
import zlib

REPO = pathlib.Path(__file__).resolve().parents[1]
if (REPO / "bindings" / "python" / "cucore").is_dir() and os.environ.get("CUCORE_EXAMPLES_INSTALLED") != "1":
    sys.path.insert(0, str(REPO / "bindings" / "python"))  # run from a checkout: its binding

import cucore  # noqa: E402
from cucore.texture import OpaqueArrayOptions, ResourceDescriptor, TextureObjectOptions  # noqa: E402

KERNEL = r"""
extern "C" __global__ void upscale(cudaTextureObject_t picture, uchar4 *out, int width, int height, float scale) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    // the centre of output pixel (x, y), in the picture's texel coordinates: between texels, the texture
    // units interpolate the four around it (filter_mode "linear")
    float4 c = tex2D<float4>(picture, (x + 0.5f) / scale, (y + 0.5f) / scale);
    out[y * width + x] = make_uchar4(__float2uint_rn(c.x * 255.0f), __float2uint_rn(c.y * 255.0f),
                                     __float2uint_rn(c.z * 255.0f), __float2uint_rn(c.w * 255.0f));
}
"""


def draw(width, height):
    """The picture: RGBA bytes, row by row from the top."""
    pixels = bytearray()
    sun_x, sun_y, sun_r = width * 0.72, height * 0.3, height * 0.17
    for y in range(height):
        for x in range(width):
            hill = height * (0.62 + 0.08 * ((x / width - 0.35) ** 2 * 6 - 0.3))
            if (x - sun_x) ** 2 + (y - sun_y) ** 2 <= sun_r ** 2:
                rgb = (255, 214, 70)
            elif y < hill:  # sky, lighter towards the horizon
                t = y / hill
                rgb = (int(40 + 120 * t), int(90 + 110 * t), int(200 + 40 * t))
            elif y < height * 0.8:
                rgb = (40, int(150 - 60 * (y - hill) / height), 60)
            else:  # a checkered field
                dark = ((x // 4) + (y // 4)) % 2
                rgb = (180, 130, 60) if dark else (220, 180, 100)
            pixels += bytes(rgb) + b"\xff"
    return bytes(pixels)


def bilinear(pixels, width, height, u, v):
    """What the kernel reads at (u, v): the clamped bilinear blend of the four texels around it, per channel,
    as 8-bit values."""
    u, v = u - 0.5, v - 0.5
    i, j = int(u // 1), int(v // 1)
    a, b = u - i, v - j

    def texel(ii, jj, c):
        ii, jj = min(max(ii, 0), width - 1), min(max(jj, 0), height - 1)
        return pixels[(jj * width + ii) * 4 + c]
    return [round((1 - a) * (1 - b) * texel(i, j, c) + a * (1 - b) * texel(i + 1, j, c)
                  + (1 - a) * b * texel(i, j + 1, c) + a * b * texel(i + 1, j + 1, c)) for c in range(4)]


def write_png(path, rgba, width, height):
    """An 8-bit RGBA PNG: the signature, IHDR, one zlib-compressed IDAT (filter 0 on each row), IEND."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + rgba[y * width * 4:(y + 1) * width * 4] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, filter 0, no interlace
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    pathlib.Path(path).write_bytes(png)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="texture_upscale.png", help="the PNG to write (default: %(default)s)")
    ap.add_argument("--scale", type=int, default=4, help="the upscaling factor (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.scale < 1:
        ap.error("--scale must be at least 1")

    try:
        if cucore.Device.count() == 0:
            print("texture_upscale: a CUDA driver is installed but no GPU is visible; nothing to do")
            return 0
    except cucore.LibraryNotFoundError as e:
        print(f"texture_upscale: libcucore could not be loaded:\n{e}", file=sys.stderr)
        return 1
    except cucore.CUDAError as e:
        print(f"texture_upscale: no GPU here ({e}); nothing to do")
        return 0
    try:
        nvrtc = cucore.compiler_version("nvrtc")
    except cucore.CUDAError as e:
        print(f"texture_upscale: NVRTC is not installed ({e}); nothing to do")
        return 0

    dev = cucore.Device(0)
    dev.set_current()
    s = dev.create_stream()
    cc = dev.compute_capability
    kernel = cucore.Program(KERNEL, "c++", cucore.ProgramOptions(arch=f"sm_{cc.major}{cc.minor}")) \
        .compile("cubin").get_kernel("upscale")

    w, h = 64, 40
    W, H = w * args.scale, h * args.scale
    picture = draw(w, h)
    # The picture in a CUDA array of RGBA8 elements, read as floats in [0, 1] and filtered linearly.
    with dev.create_opaque_array(OpaqueArrayOptions((w, h), "uint8", 4)) as arr:
        arr.copy_from(picture, stream=s)
        texture = dev.create_texture_object(
            resource=ResourceDescriptor.from_opaque_array(arr),
            options=TextureObjectOptions(filter_mode="linear", read_mode="normalized_float", address_mode="clamp"))
    # (the array is closed: the texture object keeps its storage until it is closed too)
    with texture:
        out = dev.allocate(W * H * 4, stream=s)
        cucore.launch(s, cucore.LaunchConfig(grid=((W + 15) // 16, (H + 15) // 16), block=(16, 16)), kernel,
                      texture, out, W, H, float(args.scale))
        result = out.to_bytes(stream=s)  # copied on s, which is then synchronized
        out.close()

    # Every output pixel against the same interpolation done here (the texture units weigh with 8-bit
    # fractions and convert to 8 bits again: one unit of difference allowed).
    worst = 0
    for y in range(H):
        for x in range(W):
            want = bilinear(picture, w, h, (x + 0.5) / args.scale, (y + 0.5) / args.scale)
            got = result[(y * W + x) * 4:(y * W + x) * 4 + 4]
            worst = max(worst, max(abs(g - e) for g, e in zip(got, want)))
    if worst > 1:
        print(f"texture_upscale: the GPU's result differs from the bilinear interpolation by up to {worst}",
              file=sys.stderr)
        return 1
    write_png(args.out, result, W, H)
    print(f"texture_upscale: {w}x{h} upscaled {args.scale}x to {W}x{H} on {dev.name} through a bilinear texture "
          f"(NVRTC {nvrtc[0]}.{nvrtc[1]}); every pixel within 1 of the host's interpolation; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
