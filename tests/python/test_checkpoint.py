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
import time
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
    for bad in (-1, 2 ** 32, 1.5, True):
        with pytest.raises(ValueError):
            p.lock(timeout_ms=bad)
    with pytest.raises(ValueError):
        p.restore({"GPU-not-a-uuid": "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"})
    with pytest.raises(ValueError):
        p.restore({b"short": uuid.uuid4()})


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
    assert isinstance(info.value, (cucore.InvalidArgumentError, cucore.NotSupportedError)), info.value
    assert "cuCheckpointProcessGetState failed for process" in str(info.value)


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


@pytest.mark.gpu
def test_the_cycle_of_a_child_process(gpu, fake_driver):
    from cucore import _lib
    env = dict(os.environ, PYTHONPATH=str(REPO / "bindings" / "python"), CUCORE_LIBRARY=_lib.path())
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    p = Process(child.pid)
    locked = False
    try:
        ready, _, _ = select.select([child.stdout], [], [], 60)
        line = child.stdout.readline().strip() if ready else ""
        assert line == "ready", f"the child did not start: {child.stderr.read() if child.poll() is not None else ''}"
        assert p.state == "running"
        try:
            p.lock(timeout_ms=20000)
        except cucore.NotSupportedError as e:  # the platform refuses: the driver's reason is in the message
            assert "cuCheckpointProcessLock failed" in str(e)
            print(f"checkpointing refused here: {e}")
            assert not fake_driver
            return
        locked = True
        assert p.state == "locked"
        start = time.monotonic()
        try:
            p.checkpoint()
        except cucore.NotSupportedError as e:
            assert "cuCheckpointProcessCheckpoint failed" in str(e)
            print(f"checkpoint refused here: {e}")
            assert not fake_driver
            assert p.state == "locked"
            p.unlock()
            locked = False
            assert p.state == "running"
            return
        assert p.state == "checkpointed"
        with pytest.raises(cucore.InvalidStateError):
            p.unlock()  # only a locked process unlocks
        p.restore()
        assert p.state == "locked"
        p.unlock()
        locked = False
        assert p.state == "running"
        print(f"checkpoint and restore took {time.monotonic() - start:.2f} s")
    finally:
        if locked:
            try:
                state = p.state
                if state == "checkpointed":
                    p.restore()
                p.unlock()
            except cucore.CUDAError:
                pass
        child.kill()
        child.wait(timeout=30)
