"""Program and ProgramOptions: option validation anywhere; real NVRTC compiles (arch given, so no GPU is
needed; skipped where NVRTC is missing); compile errors; name expressions."""
import pytest

import cucore

SOURCE = r"""
extern "C" __global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
template <typename T> __global__ void fill(T *out, T v) { out[threadIdx.x] = v; }
__device__ int counter;
"""


@pytest.fixture
def nvrtc(lib):
    try:
        return cucore.compiler_version("nvrtc")
    except cucore.NotSupportedError as e:
        pytest.skip(f"NVRTC is not installed: {e}")


def opts(**kw):
    kw.setdefault("arch", "sm_90")
    return cucore.ProgramOptions(**kw)


@pytest.mark.parametrize("kwargs, exc", [
    ({"arch": 90}, TypeError), ({"arch": ""}, ValueError), ({"std": 17}, TypeError),
    ({"define_macro": 5}, TypeError), ({"define_macro": ("A", 1)}, TypeError), ({"define_macro": "=1"}, ValueError),
    ({"debug": 1}, TypeError), ({"ftz": "yes"}, TypeError), ({"max_register_count": 0}, ValueError),
    ({"max_register_count": 1.5}, TypeError), ({"diag_error": ["x"]}, TypeError), ({"diag_warn": -1}, ValueError),
    ({"headers": ["a.h"]}, TypeError), ({"headers": {"a.h": 5}}, TypeError), ({"include_path": 3}, TypeError),
    ({"extra_options": [b"-x"]}, TypeError), ({"name": "a\0b"}, ValueError),
])
def test_options_are_validated(kwargs, exc):
    with pytest.raises(exc):
        cucore.ProgramOptions(**kwargs)


def test_options_become_the_c_struct():
    o = cucore.ProgramOptions(arch="sm_90", std="c++17", define_macro=["A", ("B", "2")], undefine_macro="C",
                              include_path=["/x"], debug=True, ftz=False, fma=True, max_register_count=32,
                              diag_suppress=[177, 550], headers={"h.h": "#define H 1"}, extra_options=["-w"])
    s = o._to_c().struct
    assert s.arch == b"sm_90" and s.std == b"c++17" and s.debug == 1 and s.max_register_count == 32
    assert [s.defines[i] for i in range(s.define_count)] == [b"A", b"B=2"]
    assert s.undefine_count == 1 and s.include_path_count == 1 and s.header_count == 1
    assert s.ftz == 2 and s.fma == 1 and s.prec_div == 0  # OFF, ON, the compiler's default
    assert [s.diag_suppress[i] for i in range(s.diag_suppress_count)] == [177, 550]
    assert o._to_c() is o._to_c()  # cached while unchanged
    o.std = "c++20"
    assert o._to_c().struct.std == b"c++20"


def test_program_rejects_bad_code(lib):
    with pytest.raises(ValueError):
        cucore.Program("x", "fortran")
    with pytest.raises(TypeError):
        cucore.Program(b"x", "c++")
    with pytest.raises(TypeError):
        cucore.Program("x", "c++", options=5)


def test_compile_to_ptx_and_cubin(nvrtc):
    prog = cucore.Program(SOURCE, "c++", opts(std="c++17"))
    assert prog.backend == "NVRTC" and prog.arch == "sm_90" and prog.code_type == "c++"
    assert "-arch=sm_90" in " ".join(prog.flags) or any("sm_90" in f for f in prog.flags)
    ptx = prog.compile("ptx")
    assert ptx.code_type == "ptx" and b".entry scale" in ptx.code
    cubin = prog.compile("cubin")
    assert cubin.code_type == "cubin" and cubin.code[:4] == b"\x7fELF"
    with prog:
        pass
    with pytest.raises(cucore.InvalidHandleError, match="closed"):
        prog.compile("ptx")


def test_options_reach_nvrtc(nvrtc):
    src = '#include "h.h"\nextern "C" __global__ void k(int *o) { *o = H + VALUE; }'
    prog = cucore.Program(src, "c++", opts(define_macro=("VALUE", "40"), headers={"h.h": "#define H 2"}))
    flags = prog.flags
    assert any("VALUE=40" in f for f in flags), flags
    ptx = prog.compile("ptx").code
    assert b"42" in ptx


def test_compile_error_raises_with_the_log(nvrtc):
    prog = cucore.Program('extern "C" __global__ void k() { this is not C++; }', "c++", opts())
    with pytest.raises(cucore.CompilationError) as info:
        prog.compile("cubin")
    assert info.value.status == cucore.Status.ERROR_COMPILATION
    assert "error" in info.value.log and info.value.log == prog.log
    assert "error" in str(info.value)


def test_name_expressions(nvrtc):
    code = cucore.Program(SOURCE, "c++", opts()).compile("cubin", name_expressions=("fill<int>", "fill<float>"))
    m = code.symbol_mapping
    assert set(m) == {"fill<int>", "fill<float>"}
    assert m["fill<int>"].startswith("_Z") and m["fill<int>"] != m["fill<float>"]


def test_logs_parameter_and_ltoir(nvrtc):
    import io
    buf = io.StringIO()
    prog = cucore.Program(SOURCE, "c++", opts(link_time_optimization=True))
    code = prog.compile("ltoir", logs=buf)
    assert code.code_type == "ltoir" and len(code.code) > 0 and buf.getvalue() == prog.log


def test_bad_target(nvrtc):
    prog = cucore.Program(SOURCE, "c++", opts())
    with pytest.raises(ValueError):
        prog.compile("fatbin")
    with pytest.raises(TypeError):
        prog.compile(4)
