"""Scenarios of `cuda.core.texture` written as a cuda.core 1.2 user writes them, run with both packages (the
`core` fixture): an OpaqueArray filled and read back by copies, a TextureObject over it read by a kernel, and a
SurfaceObject over an array made with `is_surface_load_store=True` written by a kernel. Only cuda.core's public
API is used, through `core`; every scenario compares the data read back.

Scenarios that run device code need a real GPU (under the fake driver of test_fake_driver.py they skip with the
reason); the copies run there too."""
import struct

import pytest

from cuda_core_style import compile_cubin, read_bytes, to_device

SOURCE = r"""
extern "C" __global__ void read_texture(cudaTextureObject_t tex, float *out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, i + 0.5f);
    if (i == 0) out[n] = tex1D<float>(tex, n + 10.5f);   // past the end: clamped to the last element
}
extern "C" __global__ void write_surface(cudaSurfaceObject_t surf, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) surf1Dwrite<float>(100.0f + i, surf, (int)(i * sizeof(float)));
}
"""


def _kernels(core, dev):
    code = compile_cubin(core, dev, SOURCE)
    return code.get_kernel("read_texture"), code.get_kernel("write_surface")


def _floats(core, buf, stream, count):
    return list(struct.unpack(f"<{count}f", read_bytes(core, buf, stream, 4 * count)))


@pytest.mark.gpu
def test_an_opaque_array_round_trip(core, core_device):
    dev = core_device
    stream = dev.create_stream()
    options = core.texture.OpaqueArrayOptions(shape=(16, 8), format="uint8", num_channels=4)
    assert options.is_surface_load_store is False
    arr = dev.create_opaque_array(options)
    assert arr.shape == (16, 8) and arr.format == core.typing.ArrayFormatType.UINT8 and arr.num_channels == 4
    assert arr.size_bytes == 16 * 8 * 4 and arr.element_bytes == 4 and not arr.is_surface_load_store
    data = bytes(i % 251 for i in range(arr.size_bytes))
    arr.copy_from(to_device(core, dev, stream, data), stream=stream)
    back = dev.allocate(arr.size_bytes, stream=stream)
    arr.copy_to(back, stream=stream)
    assert read_bytes(core, back, stream, arr.size_bytes) == data
    arr.close()
    assert arr.is_closed


@pytest.mark.gpu
def test_a_texture_over_an_opaque_array_is_read_by_a_kernel(core, core_device):
    dev = core_device
    read_texture, _ = _kernels(core, dev)
    stream = dev.create_stream()
    n = 64
    arr = dev.create_opaque_array(core.texture.OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1))
    arr.copy_from(to_device(core, dev, stream, struct.pack(f"<{n}f", *(0.5 * i for i in range(n)))), stream=stream)
    resource = core.texture.ResourceDescriptor.from_opaque_array(arr)
    options = core.texture.TextureObjectOptions(address_mode="clamp", filter_mode="point")
    tex = dev.create_texture_object(resource=resource, options=options)
    out = dev.allocate(4 * (n + 1), stream=stream)
    core.launch(stream, core.LaunchConfig(grid=1, block=n), read_texture, tex.handle, out, n)
    assert _floats(core, out, stream, n + 1) == [0.5 * i for i in range(n)] + [0.5 * (n - 1)]
    tex.close()
    assert tex.is_closed


@pytest.mark.gpu
def test_a_surface_over_a_load_store_array_is_written_by_a_kernel(core, core_device):
    dev = core_device
    _, write_surface = _kernels(core, dev)
    stream = dev.create_stream()
    n = 32
    options = core.texture.OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1,
                                              is_surface_load_store=True)
    arr = dev.create_opaque_array(options)
    assert arr.is_surface_load_store
    surf = dev.create_surface_object(resource=core.texture.ResourceDescriptor.from_opaque_array(arr))
    core.launch(stream, core.LaunchConfig(grid=1, block=n), write_surface, surf.handle, n)
    out = dev.allocate(4 * n, stream=stream)
    arr.copy_to(out, stream=stream)
    assert _floats(core, out, stream, n) == [100.0 + i for i in range(n)]
