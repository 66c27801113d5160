"""Events handed out again: Event.close() renews an event of Device.create_event that nothing else holds
(cucore_event_reset) and keeps it for the device's next create_event; a renewed event answers every call as a
new one, and what others may still use is never handed out again. Needs a GPU (or the fake driver)."""
import pytest

import cucore

pytestmark = pytest.mark.gpu

TIMING = cucore.EventOptions(timing_enabled=True)


def _spares(dev, options=None):
    """The device's renewed events of this kind, emptied first (their references released): this test's own."""
    flags = 0 if options is None else cucore.event._options_flags(options)
    spares = dev._event_spares[flags]
    while spares:
        assert cucore.event._fast_event_release(spares.pop()) == 0
    return spares


def _answers_as_new(e, stream):
    assert e.is_done                       # never recorded: complete
    e.sync()
    stream.wait(e)
    with pytest.raises(cucore.CUDAError, match="never been recorded|without CUCORE_EVENT_TIMING"):
        e - e


def test_a_closed_event_comes_back_renewed(gpu):
    s = gpu.create_stream()
    for options in (None, TIMING):
        spares = _spares(gpu, options)
        e = gpu.create_event(options)
        s.record(e)
        s.sync()
        c_handle = e._h
        e.close()
        assert len(spares) == 1 and spares[0] is c_handle, "kept, renewed"
        again = gpu.create_event(options)
        assert again._h is c_handle and not spares, "handed out again"
        assert again.is_timing_enabled == (options is TIMING)
        _answers_as_new(again, s)
        # Recorded anew, it times like a new event.
        if options is TIMING:
            start = gpu.create_event(TIMING)
            s.record(start)
            s.record(again)
            s.sync()
            assert (again - start) >= 0.0
            start.close()
        again.close()
    s.close()


def test_an_escaped_driver_event_is_not_handed_out_again(gpu):
    s = gpu.create_stream()
    _spares(gpu)
    e = gpu.create_event()
    raw = e.handle                         # the driver event is now the caller's too
    e.close()
    again = gpu.create_event()
    assert again.handle != raw, "renewed with another driver event"
    _answers_as_new(again, s)
    again.close()
    s.close()


def test_an_event_held_elsewhere_is_released_not_kept(gpu):
    spares = _spares(gpu)
    e = gpu.create_event()
    h = e._h
    assert cucore.event._cucore_event_retain(h) == 0   # another reference to it
    e.close()
    assert not spares, "another reference holds it: released"
    assert cucore.event._cucore_event_query(h, cucore.event._byref(cucore.event._c_int())) == 0, "still valid"
    assert cucore.event._cucore_event_release(h) == 0
    assert cucore.event._cucore_event_query(h, cucore.event._byref(cucore.event._c_int())) != 0, "gone now"
    # Events Stream.record makes, and interprocess ones, are released as any handle.
    s = gpu.create_stream()
    s.record().close()
    assert not spares
    s.close()


def test_the_spares_are_bounded(gpu):
    spares = _spares(gpu)
    events = [gpu.create_event() for _ in range(cucore.event._SPARES_PER_KIND + 5)]
    for e in events:
        e.close()
    assert len(spares) == cucore.event._SPARES_PER_KIND
    handed = [gpu.create_event() for _ in range(cucore.event._SPARES_PER_KIND)]
    assert not spares
    for e in handed:
        e.close()
