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


NCCL_BENCH = REPO / "bench" / "python" / "bench_nccl.py"


def test_nccl_bench_without_two_gpus_exits_zero(lib):
    if gpu_state()[0] >= 2:
        pytest.skip("two GPUs are present: covered by test_nccl_bench_quick_run")
    r = subprocess.run([sys.executable, str(NCCL_BENCH), "--quick"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bench_nccl: skipped" in r.stdout, r.stdout


@pytest.mark.gpu
def test_nccl_bench_quick_run(gpu, tmp_path):
    """bench_nccl.py on 8 MiB without PyTorch's (slow to start) column: every row measured or skipped with the
    reason; under the fake driver (--fake-ok) with the fake NCCL the rerun names, or none."""
    if gpu_state()[0] < 2:
        pytest.skip("needs two GPUs")
    out = tmp_path / "nccl.md"
    cmd = [sys.executable, str(NCCL_BENCH), "--quick", "--size-mib", "8", "--no-torch", "--out", str(out)]
    env = dict(os.environ)
    if FAKE_DRIVER:
        cmd.append("--fake-ok")
        env.setdefault("CUCORE_NCCL_PATH", "/nonexistent/libcucore_fake_nccl.so")  # never a real NCCL here
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    for row in ("peer copy 0 -> 1", "peer copy 1 -> 0"):
        assert re.search(rf"^\| {re.escape(row)} \| [0-9.]+ \|", text, re.M), text
    all_reduce = re.search(r"^\| all-reduce 8 MiB float32 \| [0-9.]+ \|.*\| [0-9.]+ \| [0-9.]+ \|$", text, re.M)
    assert bool(all_reduce) != ("- skipped: all-reduce: NCCL is missing" in text), text
    if not FAKE_DRIVER:
        assert "no cuMemcpyPeerAsync column" not in text, text
