"""Linker: LTO link of two LTO-IR modules with nvJitLink (no GPU needed with an explicit arch)."""
import pytest

import cucore

A = 'extern "C" __device__ int twice(int x) { return 2 * x; }'
B = 'extern "C" __device__ int twice(int x);\nextern "C" __global__ void k(int *o) { *o = twice(21); }'


@pytest.fixture
def tools(lib):
    try:
        cucore.compiler_version("nvrtc")
        cucore.compiler_version("nvjitlink")
    except cucore.NotSupportedError as e:
        pytest.skip(f"NVRTC or nvJitLink is not installed: {e}")


def ltoir(src):
    o = cucore.ProgramOptions(arch="sm_90", relocatable_device_code=True, link_time_optimization=True)
    return cucore.Program(src, "c++", o).compile("ltoir")


@pytest.mark.parametrize("kwargs, exc, field", [
    ({"optimization_level": 4}, ValueError, "optimization_level"), ({"debug": 1}, TypeError, "debug"),
    ({"backend": "gcc"}, ValueError, "backend"), ({"arch": 90}, TypeError, "arch"),
    ({"ptxas_options": 5}, TypeError, "ptxas_options"), ({"ftz": 1}, TypeError, "ftz"),
    ({"extra_options": [b"-v"]}, TypeError, "extra_options")])
def test_options_are_validated(kwargs, exc, field):
    # The message names the LinkerOptions field (the checks are shared with ProgramOptions).
    with pytest.raises(exc, match=f"LinkerOptions\\.{field}"):
        cucore.LinkerOptions(**kwargs)


def test_lto_link_of_two_modules(tools):
    assert cucore.Linker.which_backend() == "nvJitLink"
    opts = cucore.LinkerOptions(arch="sm_90", link_time_optimization=True, optimization_level=3)
    linker = cucore.Linker(ltoir(A), ltoir(B), options=opts)
    assert linker.backend == "nvJitLink"
    cubin = linker.link("cubin")
    assert cubin.code_type == "cubin" and cubin.code[:4] == b"\x7fELF"
    assert isinstance(linker.get_info_log(), str) and linker.get_error_log() == ""


def test_link_errors_carry_the_log(tools):
    opts = cucore.LinkerOptions(arch="sm_90", link_time_optimization=True)
    with pytest.raises(cucore.CUDAError) as info:
        cucore.Linker(ltoir(B), options=opts).link("cubin")  # `twice` is undefined
    assert info.value.status == cucore.Status.ERROR_COMPILATION
    assert "twice" in (getattr(info.value, "log", "") + str(info.value))


def test_linker_rejects_bad_inputs(lib):
    with pytest.raises(ValueError):
        cucore.Linker()
    with pytest.raises(TypeError):
        cucore.Linker(b"not object code")
