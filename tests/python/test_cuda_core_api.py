"""cuda.core's public Python API is a subset of cucore's: every module, class, function, method, property,
parameter (name, position, keyword-only or not, default), enum member and exception class of cuda.core 1.2
exists in cucore under the same name, apart from the deliberate exclusions listed with their reasons in
docs/moving_from_cuda_core.md. Where cuda.core imports (the GPU server) it is described live; elsewhere the
committed snapshot of its surface (tests/python/data/cuda_core_api.json, `scripts/api_surface.py snapshot`)
stands in (made on the GPU server, the reference environment), and the live run there checks it."""
import importlib
import json
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import api_surface  # noqa: E402

SNAPSHOT = REPO / "tests" / "python" / "data" / "cuda_core_api.json"
MAX_EXCLUSIONS = 30  # "a short documented list": a longer one means the work is not done


def _live_cuda_core():
    try:
        return importlib.import_module("cuda.core")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"cuda.core is not importable in {sys.executable}: {e}")


def test_cucore_offers_every_public_name_of_cuda_core():
    reference, source = api_surface.reference_surface(SNAPSHOT)
    ours = api_surface.describe("cucore", everything_public=True)
    gaps = api_surface.compare(reference, ours, frozenset(api_surface.documented_exclusions()))
    assert not gaps, f"{len(gaps)} gaps against {source}:\n" + "\n".join(gaps)


def test_the_comparison_finds_a_gap():
    # The comparison itself can fail: take one method, one parameter default and one module away.
    reference = json.loads(SNAPSHOT.read_text())["surface"]
    ours = api_surface.describe("cucore", everything_public=True)
    ours["."]["Device"]["members"].pop("allocate")
    params = ours["."]["Stream"]["members"]["record"]["parameters"]
    for p in params:
        p.pop("default", None)
    ours.pop(".typing")
    gaps = api_surface.compare(reference, ours)
    assert "cuda.core.Device.allocate: missing" in gaps
    assert any(g.startswith("cuda.core.Stream.record: parameter 'event' has no default") for g in gaps)
    assert "cuda.core.typing: no module cucore.typing" in gaps


def test_exclusions_are_short_documented_and_still_needed():
    exclusions = api_surface.documented_exclusions()
    assert len(exclusions) <= MAX_EXCLUSIONS
    reference = json.loads(SNAPSHOT.read_text())["surface"]
    ours = api_surface.describe("cucore", everything_public=True)
    for name, reason in exclusions.items():
        assert len(reason) > 20, f"{name}: the reason must say why ({reason!r})"
        # Still needed: without this one exclusion the comparison reports a gap under its name.
        others = frozenset(exclusions) - {name}
        gaps = api_surface.compare(reference, ours, others)
        assert any(g.startswith(name) for g in gaps), f"{name} is excluded but cucore now matches it: drop the row"


def test_snapshot_is_cuda_core_as_installed():
    core = _live_cuda_core()
    data = json.loads(SNAPSHOT.read_text())
    bindings = importlib.import_module("cuda.bindings").__version__
    # cuda.core re-exports some of cuda.bindings' enums (system.typing.FieldId, DeviceArch), whose members follow
    # the bindings' version: the snapshot is of the GPU server's pair.
    if (core.__version__, bindings) != (data["cuda_core_version"], data["cuda_bindings_version"]):
        pytest.skip(f"cuda.core {core.__version__} over cuda.bindings {bindings} is installed; the snapshot is of "
                    f"{data['cuda_core_version']} over {data['cuda_bindings_version']}")
    live = api_surface.describe("cuda.core")
    assert live == data["surface"], "regenerate: scripts/api_surface.py snapshot " + str(SNAPSHOT)


def test_device_properties_have_cuda_cores_names_and_bool_types():
    # Device.properties is reached through a Device, not a module name, so the surface comparison cannot see
    # it: every property of cuda.core's DeviceProperties must be one of cucore's, and the ones its stubs
    # declare `-> bool` must be bool here too.
    import ast
    import importlib.util
    from pathlib import Path

    import cucore.device

    core = _live_cuda_core()
    cls = importlib.import_module(core.Device.__module__).DeviceProperties
    theirs = {n for n in dir(cls) if not n.startswith("_")}
    ours = set(cucore.device._ATTRIBUTES)
    assert not theirs - ours, f"DeviceProperties lacks {sorted(theirs - ours)}"
    stub = Path(importlib.util.find_spec(core.Device.__module__).origin)
    stub = stub.with_name(stub.name.split(".")[0] + ".pyi")
    if not stub.is_file():
        pytest.skip(f"cuda.core's stub {stub.name} is not installed")
    booleans = {f.name for node in ast.walk(ast.parse(stub.read_text()))
                if isinstance(node, ast.ClassDef) and node.name == "DeviceProperties"
                for f in node.body if isinstance(f, ast.FunctionDef) and isinstance(f.returns, ast.Name)
                and f.returns.id == "bool"}
    assert booleans and booleans == set(cucore.device._BOOLEAN_ATTRIBUTES)
