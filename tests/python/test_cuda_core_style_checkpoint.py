"""Scenarios of `cuda.core.checkpoint` written as a cuda.core 1.2 user writes them, run with both packages (the
`core` fixture): a Process named by its pid, its arguments checked, and this process's own state queried. Only
cuda.core's public API is used, through `core`. Where the driver or platform has no checkpointing, both packages
raise a RuntimeError (cucore's NotSupportedError is one) and the scenario skips with its message."""
import os
import threading

import pytest


def test_a_process_is_named_by_a_positive_int_pid(core):
    Process = core.checkpoint.Process
    p = Process(os.getpid())
    assert p.pid == os.getpid()
    for bad in (0, -3):
        with pytest.raises(ValueError):
            Process(bad)
    for bad in ("12", 1.5, True, None):
        with pytest.raises(TypeError):
            Process(bad)


@pytest.mark.gpu
def test_this_process_is_running(core, core_device):
    me = core.checkpoint.Process(os.getpid())
    try:
        state = me.state
    except RuntimeError as e:   # cuda.core's "not supported by the installed NVIDIA driver"; cucore's NotSupportedError
        pytest.skip(f"no CUDA checkpointing here: {e}")
    assert state == "running"
    tid = me.restore_thread_id
    assert isinstance(tid, int) and tid > 0
    assert tid in {t.native_id for t in threading.enumerate()} or os.path.exists(f"/proc/self/task/{tid}") \
        or tid == os.getpid() + 1   # a thread of this process (the fake driver names pid + 1)
