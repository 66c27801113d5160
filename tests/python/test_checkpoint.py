"""cucore.checkpoint: the argument checks (no GPU), this process's own state and restore thread, and the
whole lock -> checkpoint -> restore -> unlock cycle of a child CUDA process, bounded in time (the child is
always killed). On a real GPU a platform that refuses checkpointing (a container without the privileges)
must say so with NotSupportedError and the driver's reason, which the test prints."""
import os
import pathlib
import select
import subprocess
import sys
import textwrap
import uuid

import pytest

import cucore
from cucore.checkpoint import Process
from conftest import REPO


def test_arguments_are_checked():
    for bad in (0, -4):
        with pytest.raises(ValueError):
            Process(bad)
    for bad in ("12", 1.0, True):
        with pytest.raises(TypeError):
            Process(bad)
    p = Process(1234)
    assert p.pid == 1234 and p == Process(1234) and hash(p) == hash(Process(1234)) and p != Process(1235)
    assert "1234" in repr(p)
    for bad in (-1, 2 ** 32):             # an int out of range: ValueError; anything else: TypeError (cuda.core's)
        with pytest.raises(ValueError):
            p.lock(timeout_ms=bad)
    for bad in (1.5, True, "10"):
        with pytest.raises(TypeError, match="timeout_ms must be an int"):
            p.lock(timeout_ms=bad)
    with pytest.raises(ValueError):
        p.restore({"GPU-not-a-uuid": "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"})
    with pytest.raises(ValueError):
        p.restore({b"short": uuid.uuid4()})
    with pytest.raises(TypeError, match="gpu_mapping must be a mapping"):
        p.restore([("GPU-00010203-0405-0607-0809-0a0b0c0d0e0f", "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f")])
    with pytest.raises(TypeError, match="GPU UUID values"):
        p.restore({12: uuid.uuid4()})


@pytest.mark.gpu
def test_this_process_is_running_and_has_a_restore_thread(gpu, fake_driver):
    me = Process(os.getpid())
    assert me.state == "running"
    tid = me.restore_thread_id
    if fake_driver:
        assert tid == os.getpid() + 1  # the fake's restore thread (tests/fake_driver/checkpoint.hpp)
    else:  # the driver's restore thread is one of this process's threads
        assert tid > 0 and pathlib.Path(f"/proc/self/task/{tid}").exists(), tid
    with pytest.raises(cucore.InvalidArgumentError, match="is this process"):
        me.lock(timeout_ms=1000)
    assert me.state == "running"


@pytest.mark.gpu
def test_a_process_that_is_not_there(gpu):
    gone = Process(0x3FFFFFF0)  # above any pid_max
    with pytest.raises(cucore.CUDAError) as info:
        gone.state
    # Whatever the driver answers (it documents INVALID_VALUE, NOT_INITIALIZED and NOT_SUPPORTED), the error
    # names the call and the pid.
    assert f"cuCheckpointProcessGetState failed for process {0x3FFFFFF0}" in str(info.value), info.value


CHILD = """
import sys, time
import cucore
d = cucore.Device(0)
d.set_current()
s = d.create_stream()
b = d.allocate(1 << 20, stream=s)
s.sync()
print("ready", flush=True)
time.sleep(90)
"""

# The steps, in a process of their own so that a driver call that never returns costs a timeout, not a hung
# test. Prints "refused: <step>: <message>" where the platform refuses a step (NotSupportedError), else "done".
CONTROLLER = """
import sys, time
import cucore
from cucore.checkpoint import Process
p = Process(int(sys.argv[1]))
fake = sys.argv[2] == "1"
assert p.state == "running", p.state
try:
    p.lock(timeout_ms=20000)
except cucore.NotSupportedError as e:
    assert "cuCheckpointProcessLock failed" in str(e) and not fake, e
    print(f"refused: lock: {e}")
    sys.exit(0)
assert p.state == "locked", p.state
start = time.monotonic()
try:
    p.checkpoint()
except cucore.NotSupportedError as e:
    assert "cuCheckpointProcessCheckpoint failed" in str(e) and not fake, e
    assert p.state == "locked", p.state
    p.unlock()
    assert p.state == "running", p.state
    print(f"refused: checkpoint: {e}")
    sys.exit(0)
assert p.state == "checkpointed", p.state
try:
    p.unlock()
    raise AssertionError("a checkpointed process unlocked")
except cucore.InvalidStateError:
    pass
p.restore()
assert p.state == "locked", p.state
p.unlock()
assert p.state == "running", p.state
print(f"done in {time.monotonic() - start:.2f} s")
"""


@pytest.mark.gpu
def test_the_cycle_of_a_child_process(gpu, fake_driver):
    from cucore import _lib
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"), CUCORE_LIBRARY=_lib.path())
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([child.stdout], [], [], 60)
        line = child.stdout.readline().strip() if ready else ""
        assert line == "ready", f"the child did not start: {child.stderr.read() if child.poll() is not None else ''}"
        r = subprocess.run([sys.executable, "-c", CONTROLLER, str(child.pid), "1" if fake_driver else "0"],
                           env=env, capture_output=True, text=True, timeout=180)
        print(r.stdout)
        assert r.returncode == 0, f"the checkpoint steps failed:\n{r.stdout}\n{r.stderr}"
        out = r.stdout.strip()
        assert out.startswith("done in ") or (not fake_driver and out.startswith("refused: ")), out
    finally:
        child.kill()
        child.wait(timeout=30)
