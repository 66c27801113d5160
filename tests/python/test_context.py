"""Contexts. Needs a GPU (or the fake driver)."""
import ctypes

import pytest

import cucore

pytestmark = pytest.mark.gpu


def test_primary_context(gpu, raw):
    ctx = gpu.context
    assert ctx.is_primary
    assert ctx.device is gpu
    assert ctx.handle != 0
    cur = ctypes.c_void_p()
    raw.check(raw.cuCtxGetCurrent(ctypes.byref(cur)), "cuCtxGetCurrent")
    assert cur.value == ctx.handle  # the gpu fixture made device 0's primary context current
    assert gpu.context == ctx and hash(gpu.context) == hash(ctx)
    ctx.set_current()
    ctx.sync()
    assert "primary" in repr(ctx)
    ctx.close()
    ctx.close()
    assert "closed" in repr(ctx)
    with pytest.raises(cucore.InvalidHandleError):
        ctx.handle


def test_context_from_handle(gpu):
    primary = gpu.context
    wrapped = cucore.Context.from_handle(primary.handle)
    assert wrapped.handle == primary.handle
    assert wrapped.device is gpu
    assert wrapped == primary
    wrapped.sync()
    s = wrapped.create_stream()
    assert s.context == primary and s.device is gpu
    e = wrapped.create_event()
    s.record(e)
    e.sync()
    s.close()
    with cucore.Context.from_handle(ctypes.c_void_p(primary.handle)) as c2:
        assert c2.handle == primary.handle
    with pytest.raises(TypeError):
        cucore.Context.from_handle("0x1234")


def test_context_create_stream_and_event(gpu):
    ctx = gpu.context
    s = ctx.create_stream(cucore.StreamOptions(nonblocking=False))
    assert not s.is_nonblocking and s.context == ctx
    e = ctx.create_event(cucore.EventOptions(timing_enabled=True))
    assert e.is_timing_enabled and e.context == ctx
    s.record(e)
    s.sync()
    assert e.is_done
