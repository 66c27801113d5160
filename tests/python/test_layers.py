"""The binding's modules import each other in one direction only (bindings/python/README.md, "Layers").

LAYERS is the order, lowest first. A module imports only modules below it, and only at its top (before its
first function or class): no import of the package inside a function, none at the bottom of a module. Where a
method needs a class or a function of a module above its own (Device.create_stream makes a Stream), the module
above hands it down with _lib.hand_down when it is imported, and the module below declares the name at its
top; HANDED_DOWN lists every such name. So a cycle cannot come back unnoticed: an import upward, an import
inside a function, a module without a place in the order or a new name handed down fails here until it is
put in the order or listed. No GPU needed."""
import ast
import importlib
import os
import subprocess
import sys
import textwrap

import pytest

import cucore
from cucore import _lib
from conftest import REPO

PACKAGE = REPO / "bindings" / "python" / "cucore"

# Lowest first. _version, _abi, _abi_types, _abi_constants, device_attributes and typing are data (the middle four
# generated) and import nothing of the package; __init__ is above them all.
LAYERS = (
    "_version", "_abi", "_abi_types", "_abi_constants", "device_attributes", "typing",
    "_lib", "common", "_handle", "host", "_strided_layout",
    "device", "context", "event", "stream", "device_resources",
    "buffer", "memory_resource", "memory_pool", "managed_memory", "virtual_memory", "graph_memory", "user_memory",
    "copy_3d", "memory_operations", "ipc", "dlpack", "_array_options", "opaque_array", "texture",
    "textures", "tensor_map", "_strided_copy", "strided_memory_view", "graphics",
    "_graph_options", "kernel", "launch", "program", "object_code", "program_cache", "utils", "linker",
    "graph_builder", "graph", "_graph_node", "_executable_graph_node",
    "system", "checkpoint", "communicator",
)
RANK = {m: i for i, m in enumerate(LAYERS)}
RANK["__init__"] = len(LAYERS)

# (the module that hands down, the module below it that receives) -> the names. A name is a class or a function
# a method of the lower module needs, or the upper module itself where its functions do the work of the lower
# module's methods (the IPC and DLPack methods of Buffer, ...).
HANDED_DOWN = {
    ("common", "_lib"): {"LibraryNotFoundError", "NotSupportedError", "Status"},  # raised by the loader
    ("context", "device"): {"Context"},                                    # Device.context
    ("event", "device"): {"Event", "_event_flags_ref", "_event_options_flags"},                   # Device.create_event
    ("event", "context"): {"Event"},                                       # Context.create_event
    ("stream", "device"): {"Stream", "_stream_options_ref"},                # Device.create_stream, default streams
    ("stream", "context"): {"Stream"},                                     # Context.create_stream
    ("stream", "event"): {"Stream"},                                       # Event.record(stream)
    ("device_resources", "device"): {"DeviceResources", "_create_context"},  # Device.resources, create_context
    ("device_resources", "context"): {"DeviceResources"},                  # Context.resources
    ("device_resources", "stream"): {"DeviceResources"},                   # Stream.resources
    ("memory_resource", "device"): {"MemoryResource", "_allocate_from_device"},  # Device.memory_resource, allocate
    ("memory_resource", "buffer"): {"MemoryResource"},                     # Buffer.memory_resource
    ("opaque_array", "device"): {"_create_opaque_array", "_create_mipmapped_array"},  # Device.create_opaque_array, ...
    ("texture", "device"): {"_create_texture_object", "_create_surface_object"},      # Device.create_texture_object, ...
    ("memory_pool", "memory_resource"): {"memory_pool"},                   # pool attributes, trim
    ("user_memory", "memory_resource"): {"user_memory"},                   # making user-defined resources
    ("user_memory", "device"): {"user_memory"},                            # Device.memory_resource = a user's
    ("memory_operations", "stream"): {"memory_operations"},                # the stream memory operations
    ("memory_operations", "buffer"): {"memory_operations"},                # copies with CopyOptions
    ("ipc", "event"): {"ipc"},                                             # the IPC methods
    ("ipc", "buffer"): {"ipc"},
    ("ipc", "memory_resource"): {"ipc"},
    ("dlpack", "buffer"): {"dlpack"},
    ("system", "device"): {"_system_device_of"},                          # Device.to_system_device                                      # __dlpack__, __cuda_array_interface__
    ("launch", "kernel"): {"LaunchConfig"},                                # Kernel's cluster queries
    ("object_code", "program"): {"_wrap_object_code"},                     # Program.compile
    ("graph_builder", "device"): {"GraphBuilder"},                         # Device.create_graph_builder
    ("graph_builder", "stream"): {"GraphBuilder"},                         # Stream.create_graph_builder, stream args
    ("graph", "graph_builder"): {"Graph", "GraphDefinition"},              # GraphBuilder.complete, graph_definition
    ("_graph_node", "graph"): {                                            # the adders and listings make nodes
        "GraphNode", "AdjacencySetProxy", "EmptyNode", "KernelNode", "AllocNode", "FreeNode", "MemsetNode",
        "MemcpyNode", "ChildGraphNode", "EventRecordNode", "EventWaitNode", "HostCallbackNode", "ConditionalNode",
        "IfNode", "IfElseNode", "WhileNode", "SwitchNode", "_NODE_CLASSES"},
    ("_executable_graph_node", "graph"): {                                 # Graph.__getitem__ makes the views
        "_executable_view", "ExecutableGraphNode", "ExecutableKernelNode", "ExecutableMemcpyNode",
        "ExecutableMemsetNode", "ExecutableHostCallbackNode", "ExecutableChildGraphNode",
        "ExecutableEventRecordNode", "ExecutableEventWaitNode"},
}

# Imports of the package's modules inside a function: (module, function) -> (imported module, why). None are
# needed; one would be allowed only here, with its reason (and never on a hot path: it costs about a
# microsecond per call).
ALLOWED_LATE_IMPORTS = {}


def _modules():
    """The package's modules: its files, and its subpackages (cucore.system), each one place in LAYERS."""
    return sorted([p.stem for p in PACKAGE.glob("*.py")] + [p.parent.name for p in PACKAGE.glob("*/__init__.py")])


def _files(module):
    """(file name for messages, text) of each file of `module`: the module's file, or every file of a
    subpackage (its private modules import each other freely and, like the module, only modules below it)."""
    if (PACKAGE / module).is_dir():
        return [(f"{module}/{p.name}", p.read_text()) for p in sorted((PACKAGE / module).glob("*.py"))]
    return [(f"{module}.py", (PACKAGE / f"{module}.py").read_text())]


def _source(module):
    """The text of the module's top file (a subpackage's __init__.py)."""
    path = PACKAGE / module / "__init__.py"
    return (path if path.is_file() else PACKAGE / f"{module}.py").read_text()


def _targets(node, module, depth=1):
    """The package's modules an Import/ImportFrom node imports (relative or as cucore.x). `depth` is 2 for a
    file of a subpackage, whose `from . import` stays inside it (none) and `from .. import` reaches cucore's."""
    if isinstance(node, ast.ImportFrom):
        if node.level > depth:
            raise AssertionError(f"{module}.py line {node.lineno}: imports from outside the package")
        if depth == 2 and node.level == 1:
            return []
        if node.level == depth:
            return [a.name for a in node.names] if node.module is None else [node.module.split(".")[0]]
        if node.module and (node.module == "cucore" or node.module.startswith("cucore.")):
            parts = node.module.split(".")
            return parts[1:2] if len(parts) > 1 else [a.name for a in node.names]
        return []
    return [a.name.split(".")[1] for a in node.names if a.name.startswith("cucore.")]


def _functions(tree):
    """{id(node): the name of the function it is in} for every node inside a function."""
    inside = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for n in ast.walk(fn):
                if n is not fn:
                    inside.setdefault(id(n), getattr(fn, "name", "<lambda>"))
    return inside


def _is_type_checking(node):
    """`if TYPE_CHECKING:` (typing.TYPE_CHECKING: False at run time, True for type checkers)."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _type_checking_only(tree):
    """The nodes that only type checkers see: the bodies of top-level `if TYPE_CHECKING:` blocks. Imports
    there name the classes of modules above for annotations (`-> Stream`); they never run, so they may go
    upward; the `else:` branch declares the same names as None, handed down at run time."""
    out = set()
    for node in tree.body:
        if _is_type_checking(node):
            for child in node.body:
                out.update(id(n) for n in ast.walk(child))
    return out


def layer_problems(module, source, allowed_late=ALLOWED_LATE_IMPORTS, depth=1, where_name=None):
    """What breaks the one-way order in `source` (the text of `module`, or with `depth` 2 of a file
    `where_name` of subpackage `module`): a list of messages."""
    tree = ast.parse(source)
    typing_only = _type_checking_only(tree)
    rank = RANK[module]
    first_def = min((n.lineno for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))),
                    default=float("inf"))
    inside = _functions(tree)
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in typing_only:
            continue
        for target in _targets(node, module, depth):
            if target == module and depth == 2:
                continue  # cucore.system.x from inside cucore.system
            where = f"{where_name or module + '.py'} line {node.lineno}"
            if target not in RANK:
                problems.append(f"{where}: imports {target}, which has no place in LAYERS")
                continue
            fn = inside.get(id(node))
            if fn is not None:
                if allowed_late.get((module, fn), (None,))[0] != target:
                    problems.append(f"{where}: imports {target} inside {fn}() (import at the top, or hand it down)")
                continue
            if node not in tree.body:
                problems.append(f"{where}: imports {target} inside a block (import at the top)")
            elif node.lineno > first_def:
                problems.append(f"{where}: imports {target} after its first function or class (import at the top)")
            if RANK[target] >= rank:
                problems.append(f"{where}: imports {target}, which is not below {module} in LAYERS")
    return problems


def handed_down(module, source):
    """{(module, target): {name: the value's expression}} of the _lib.hand_down calls in `source`."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "hand_down"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "_lib"):
            to = ast.literal_eval(node.args[0])
            for target in (to,) if isinstance(to, str) else to:
                names = out.setdefault((module, target), {})
                for kw in node.keywords:
                    names[kw.arg] = kw.value
    return out


def _declared_at_top(source):
    """Names a module binds to None at its top level (`A = B = None`)."""
    names = set()
    body = []
    for node in ast.parse(source).body:  # the `else:` of `if TYPE_CHECKING:` counts as the top
        body += node.orelse if _is_type_checking(node) else [node]
    for node in body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_every_module_has_its_place_in_the_order():
    assert sorted(LAYERS) == sorted(m for m in _modules() if m != "__init__")


@pytest.mark.parametrize("module", _modules())
def test_imports_go_down_and_stay_at_the_top(module):
    depth = 2 if (PACKAGE / module).is_dir() else 1
    problems = [p for name, text in _files(module) for p in layer_problems(module, text, depth=depth, where_name=name)]
    assert not problems, "\n".join(problems)


def test_the_check_finds_what_it_forbids():
    source = textwrap.dedent("""
        from . import _lib
        from .stream import Stream
        import cucore.kernel

        def make():
            from .buffer import Buffer
            return Buffer

        class Thing:
            def method(self):
                from . import ipc

        from .common import raise_error
        """)
    problems = layer_problems("event", source)
    assert any("imports stream, which is not below event" in p for p in problems), problems
    assert any("imports kernel, which is not below event" in p for p in problems), problems
    assert any("imports buffer inside make()" in p for p in problems), problems
    assert any("imports ipc inside method()" in p for p in problems), problems
    assert any("imports common after its first function or class" in p for p in problems), problems
    assert not any("_lib" in p for p in problems), problems
    assert not layer_problems("event", source.replace("from .stream import Stream\n", "")
                              .replace("import cucore.kernel\n", "").replace("from .common import raise_error", ""),
                              allowed_late={("event", "make"): ("buffer", "why"), ("event", "method"): ("ipc", "why")})


def test_every_name_handed_down_is_listed_declared_and_in_place():
    found = {}
    for module in _modules():
        found.update(handed_down(module, _source(module)))
    assert {k: set(v) for k, v in found.items()} == HANDED_DOWN
    for (module, target), names in found.items():
        assert RANK[target] < RANK[module], f"{module} hands down to {target}, which is not below it"
        declared = _declared_at_top(_source(target))
        upper = importlib.import_module(f"cucore.{module}")
        lower = importlib.import_module(f"cucore.{target}")
        for name, expression in names.items():
            assert name in declared, f"{target}.py does not declare {name} = None at its top"
            value = eval(compile(ast.Expression(expression), module, "eval"), vars(upper))  # noqa: S307
            assert getattr(lower, name) is not None and getattr(lower, name) == value, (module, target, name)


def test_hand_down_refuses_a_name_the_module_below_does_not_declare():
    with pytest.raises(ImportError, match="cucore.device declares no 'Nothing'"):
        _lib.hand_down("device", Nothing=object())
    assert not hasattr(cucore.device, "Nothing")


def test_each_module_imports_only_the_modules_below_it():
    # Import the modules one by one in their order, in a fresh interpreter whose package __init__ imports
    # nothing: importing each must load no module above it (a cycle, or an upward import, would).
    code = textwrap.dedent(f"""
        import importlib, sys, types
        package = types.ModuleType("cucore")
        package.__path__ = [{str(PACKAGE)!r}]
        sys.modules["cucore"] = package
        layers = {LAYERS!r}
        for i, name in enumerate(layers):
            importlib.import_module("cucore." + name)
            loaded = {{m.split(".")[1] for m in sys.modules if m.startswith("cucore.")}}  # a subpackage's too
            above = loaded - set(layers[:i + 1])
            assert not above, f"importing {{name}} loaded {{sorted(above)}}, above it"
        print("ok")
        """)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
