"""bench/python/bench_python.py runs (a quick smoke run; the real numbers come from a full run)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import FAKE_DRIVER, REPO, gpu_state

BENCH = REPO / "bench" / "python" / "bench_python.py"


def test_bench_without_gpu_exits_zero(lib):
    if gpu_state()[0]:
        pytest.skip("a GPU is present: covered by test_bench_quick_run")
    r = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no GPU" in r.stdout or "no device" in r.stdout


@pytest.mark.gpu
def test_bench_quick_run(gpu, tmp_path):
    out = tmp_path / "bench.md"
    r = subprocess.run([sys.executable, str(BENCH), "--quick", "--out", str(out)], capture_output=True,
                       text=True, timeout=600, env=dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    for op in ("event record", "event create + destroy", "stream create + destroy",
               "host function + synchronize round trip", "device attribute query"):
        assert f"| {op}" in text, text
    # The array rows (issue 14): measured, or skipped with the reason (never dropped silently).
    for op in ("array create + destroy, 1024 x 1024 float32", "texture object create + destroy",
               "buffer -> array copy, 64 MiB", "array -> buffer copy, 64 MiB"):
        skipped = re.search(rf"^- skipped: {re.escape(op)}: (.+)$", text, re.M)
        assert (f"| {op} |" in text) != bool(skipped), text
        if FAKE_DRIVER:
            assert f"| {op} |" in text, text  # the fake driver has arrays and texture objects
    # The graph rows (issue 15): measured on a GPU, skipped with the reason under the fake driver (no real code).
    for op in ("graph launch, 1 kernel node", "graph launch, 100 kernel nodes"):
        skipped = re.search(rf"^- skipped: {re.escape(op)}: (.+)$", text, re.M)
        assert (f"| {op} |" in text) != bool(skipped), text
        if FAKE_DRIVER:
            assert skipped and skipped.group(1).strip(), text
    # The GL rows (issue 18: each operation as its host submit and its full cost): measured where an NVIDIA
    # GL context can be made, else skipped with the reason, never dropped silently; under the fake driver
    # always skipped, saying so.
    gl_operations = ("GL buffer register + unregister", "GL buffer map + pointer + unmap",
                     "8 GL buffers, 8 single maps", "8 GL buffers, one batch map")
    for op in (f"{o}, {cost}" for o in gl_operations for cost in ("host submit", "full cost")):
        skipped = re.search(rf"^- skipped: {re.escape(op)}: (.+)$", text, re.M)
        assert (f"| {op} |" in text) != bool(skipped), text
        if skipped:
            assert skipped.group(1).strip(), text
        if FAKE_DRIVER:
            assert skipped and "fake driver" in skipped.group(1), text
