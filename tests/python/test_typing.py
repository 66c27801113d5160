"""Type hints: the package is typed (py.typed), every public function, method and property of the names in
`cucore.__all__` is annotated, mypy finds no error in the package, and code using the API is checked
against it. No GPU needed; mypy is installed into build/venv by scripts/setup.sh (skips without it
elsewhere, e.g. on the GPU server)."""
import enum
import inspect
import subprocess
import sys
import textwrap

import cucore
from conftest import REPO, require_module

BINDING = REPO / "bindings" / "python"


def _unannotated(fn, where):
    """The parameters and return of `fn` that have no annotation, as messages."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    out = [f"{where}({p.name})" for i, p in enumerate(sig.parameters.values())
           if p.annotation is inspect.Parameter.empty and not (i == 0 and p.name in ("self", "cls"))]
    if sig.return_annotation is inspect.Signature.empty:
        out.append(f"{where} -> ?")
    return out


def _own_members(cls):
    for klass in cls.__mro__:
        if klass.__module__ != "cucore" and not klass.__module__.startswith("cucore."):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") and name != "__init__":
                continue
            yield klass, name, value


def test_public_api_is_annotated():
    missing = []
    for name in cucore.__all__:
        obj = getattr(cucore, name)
        if inspect.isfunction(obj):
            missing += _unannotated(obj, name)
        elif isinstance(obj, type) and not issubclass(obj, enum.Enum):
            for klass, attr, value in _own_members(obj):
                where = f"{klass.__qualname__}.{attr}"
                if isinstance(value, property):
                    missing += _unannotated(value.fget, where) if value.fget else []
                elif isinstance(value, (staticmethod, classmethod)):
                    missing += _unannotated(value.__func__, where)
                elif inspect.isfunction(value):
                    missing += _unannotated(value, where)
    assert not missing, f"{len(missing)} unannotated: {sorted(set(missing))}"


def test_package_is_marked_typed():
    assert (BINDING / "cucore" / "py.typed").is_file()


def _mypy(*args, cwd=BINDING):
    require_module("mypy", "checks the package's type hints")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", "/dev/null", *args],
                       cwd=cwd, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def test_mypy_passes_on_the_package():
    rc, out = _mypy()  # [tool.mypy] of bindings/python/pyproject.toml
    assert rc == 0, out


USER_CODE = '''
import cucore

def run(dev: cucore.Device) -> bytes:
    s: cucore.Stream = dev.create_stream()
    e: cucore.Event = s.record()
    e.sync()
    buf: cucore.Buffer = dev.allocate(1024, stream=s)
    buf.fill(7, stream=s)
    cfg = cucore.LaunchConfig(grid=(1, 1, 1), block=128)
    major, minor = dev.compute_capability
    return buf.to_bytes(stream=s)

v: cucore.LibraryVersion = cucore.version()
n: int = cucore.Device.count()

from cucore.graph import Graph, GraphBuilder, GraphCondition, GraphDefinition, GraphNode, WhileNode

def graphs(dev: cucore.Device, buf: cucore.Buffer, s: cucore.Stream) -> Graph:
    gb: GraphBuilder = dev.create_graph_builder().begin_building()
    buf.fill(1, stream=gb)
    left, right = gb.split(2)
    gb = GraphBuilder.join(left, right)
    c: GraphCondition = gb.create_condition(default_value=1)
    body: GraphBuilder = gb.while_loop(c)
    body.end_building()
    gb.callback(lambda: None)
    d = GraphDefinition(dev)
    where: cucore.Device = d.device
    node: GraphNode = d.memset(buf, 0, 16).join()
    loop: WhileNode = node.while_loop(d.create_condition())
    loop.body.empty()
    edges: set[tuple[GraphNode, GraphNode]] = d.edges()
    d.instantiate().launch(s)
    mem = cucore.GraphMemoryResource(dev)
    used: int = mem.attributes.used_mem_high
    return gb.end_building().complete()
'''


def test_mypy_checks_code_that_uses_the_package(tmp_path):
    # As a user's project sees the package: --strict for the user's code, the package's own errors silent
    # (mypy_path stands for site-packages; py.typed is what makes mypy read an installed package at all).
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nstrict = True\nmypy_path = {BINDING}\n"
                                       "[mypy-cucore,cucore.*]\nfollow_imports = silent\n")
    (tmp_path / "good.py").write_text(USER_CODE)
    rc, out = _mypy("good.py", cwd=tmp_path)
    assert rc == 0, out
    (tmp_path / "bad.py").write_text("import cucore\nx: str = cucore.Device.count()\n"
                                     "cucore.Device().allocate('1024', stream=None)\n")
    rc, out = _mypy("bad.py", cwd=tmp_path)
    assert rc == 1 and "bad.py:2: error" in out and "bad.py:3: error" in out, out


def test_is_stream_type_is_a_runtime_checkable_protocol():
    class Streamish:
        def __cuda_stream__(self):
            return (0, 0)

    assert isinstance(Streamish(), cucore.typing.IsStreamType)
    assert not isinstance(object(), cucore.typing.IsStreamType)
