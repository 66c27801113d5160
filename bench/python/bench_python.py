#!/usr/bin/env python3
"""The Python binding beside cuda.core: the same operations, in the same process and run.

Usage:
    CUCORE_LIBRARY=build/default/lib/libcucore.so python3 bench/python/bench_python.py [--out FILE.md]
        [--repeats 7] [--target-ms 60] [--quick]

Each operation runs in a tight loop (after a warm-up) for about --target-ms per repeat; repeats of
cucore and cuda.core alternate, and the median ns/op of each is reported with the ratio cucore/cuda.core
(the project's target for the Python binding: <= 0.80). cuda.core (and cuda.bindings, for the host
function row, since cuda.core has no host-function launch) are imported if installed; otherwise only
cucore is measured and the comparison is skipped with a message. Without a GPU (or driver) it says so and
exits 0.
"""
import argparse
import ctypes
import datetime
import gc
import os
import pathlib
import platform
import statistics
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
if os.environ.get("CUCORE_BENCH_INSTALLED") != "1":
    sys.path.insert(0, str(REPO / "bindings" / "python"))

import cucore  # noqa: E402

TARGET_RATIO = 0.80


def median_ns_per_op(fn, n, repeats, results):
    """Append the ns/op of one repeat (fn runs the operation n times) to results."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        fn(n)
        t1 = time.perf_counter_ns()
    finally:
        if gc_was:
            gc.enable()
    results.append((t1 - t0) / n)


def calibrate(fn, target_ms):
    n = 8
    while True:
        t0 = time.perf_counter_ns()
        fn(n)
        dt = time.perf_counter_ns() - t0
        if dt >= target_ms * 1e6 / 4 or n >= 1 << 22:
            return max(8, int(n * target_ms * 1e6 / max(dt, 1)))
        n *= 4


# ---------------------------------------------------------------------------------------------
# The operations
# ---------------------------------------------------------------------------------------------

def cucore_ops(dev):
    s = dev.create_stream()
    ev = dev.create_event()
    attr = cucore.DeviceAttribute.MULTIPROCESSOR_COUNT
    props = dev.properties
    props.multiprocessor_count  # fill the cache, as cuda.core's first access does

    def event_record(n):
        record = s.record
        for _ in range(n):
            record(ev)
        s.sync()

    def event_create_destroy(n):
        create = dev.create_event
        for _ in range(n):
            create().close()

    def stream_create_destroy(n):
        create = dev.create_stream
        for _ in range(n):
            create().close()

    def noop():
        pass

    def host_func_round_trip(n):
        launch, sync = s.launch_host_func, s.sync
        for _ in range(n):
            launch(noop)
            sync()

    def attribute_cached(n):
        p = dev.properties
        for _ in range(n):
            p.multiprocessor_count

    def attribute_uncached(n):
        a = dev.attribute
        for _ in range(n):
            a(attr)

    return {
        "event record": event_record,
        "event create + destroy": event_create_destroy,
        "stream create + destroy": stream_create_destroy,
        "host function + synchronize round trip": host_func_round_trip,
        "device attribute query (properties, cached)": attribute_cached,
        "device attribute query (uncached)": attribute_uncached,
    }, (s, ev)


def cuda_core_ops():
    """cuda.core's versions of the same operations, or (None, reason)."""
    try:
        import cuda.core as cc
        Device = getattr(cc, "Device", None)
        if Device is None:  # cuda.core before 1.0
            from cuda.core.experimental import Device
        version = getattr(cc, "__version__", "?")
    except Exception as e:  # ImportError, or a broken install
        return None, f"cuda.core is not importable ({type(e).__name__}: {e})", None
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    ev = dev.create_event()
    dev.properties.multiprocessor_count

    def event_record(n):
        record = s.record
        for _ in range(n):
            record(ev)
        s.sync()

    def event_create_destroy(n):
        create = dev.create_event
        for _ in range(n):
            create().close()

    def stream_create_destroy(n):
        create = dev.create_stream
        for _ in range(n):
            create().close()

    def attribute_cached(n):
        p = dev.properties
        for _ in range(n):
            p.multiprocessor_count

    ops = {
        "event record": event_record,
        "event create + destroy": event_create_destroy,
        "stream create + destroy": stream_create_destroy,
        "device attribute query (properties, cached)": attribute_cached,
    }
    notes = {}
    # cuda.core has no host-function launch (NVIDIA/cuda-python#2058): its users call cuda.bindings.
    try:
        from cuda.bindings import driver

        cb_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        noop_cb = cb_type(lambda _: None)
        fn = driver.CUhostFn(ctypes.cast(noop_cb, ctypes.c_void_p).value)
        handle = s.handle

        def host_func_round_trip(n, _keep=noop_cb):
            launch = driver.cuLaunchHostFunc
            sync = s.sync
            for _ in range(n):
                launch(handle, fn, 0)
                sync()

        host_func_round_trip(2)
        ops["host function + synchronize round trip"] = host_func_round_trip
        notes["host function + synchronize round trip"] = \
            "cuda.core stream + cuda.bindings cuLaunchHostFunc (cuda.core has no host-function launch)"

        attr = driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        cu_dev = driver.cuDeviceGet(0)[1]

        def attribute_uncached(n):
            get = driver.cuDeviceGetAttribute
            for _ in range(n):
                get(attr, cu_dev)

        attribute_uncached(2)
        ops["device attribute query (uncached)"] = attribute_uncached
        notes["device attribute query (uncached)"] = "cuda.bindings cuDeviceGetAttribute (cuda.core caches)"
    except Exception as e:
        notes["host function + synchronize round trip"] = f"no cuda.bindings comparison: {e}"
    return ops, f"cuda.core {version}", (notes, s, ev, dev)


# ---------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, help="write the results as markdown to this file")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--target-ms", type=float, default=60.0, help="time per repeat and operation")
    ap.add_argument("--quick", action="store_true", help="few, short repeats (a smoke test)")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.target_ms = 3, 5.0

    try:
        count = cucore.get_device_count()
    except cucore.LibraryNotFoundError as e:
        print(f"bench_python: libcucore could not be loaded:\n{e}", file=sys.stderr)
        return 2
    except cucore.CUDAError as e:
        print(f"bench_python: no GPU here, nothing measured ({e})")
        return 0
    if count == 0:
        print("bench_python: a CUDA driver is installed but no device is visible; nothing measured")
        return 0

    dev = cucore.Device(0)
    dev.set_current()
    ours, keep_ours = cucore_ops(dev)
    fake = bool(os.environ.get("CUCORE_CUDA_DRIVER_PATH"))
    theirs, their_name, keep_theirs = (None, "cuda.core: not compared under CUCORE_CUDA_DRIVER_PATH", None) \
        if fake else cuda_core_ops()
    notes = keep_theirs[0] if keep_theirs else {}
    if theirs is None:
        print(f"bench_python: {their_name}; measuring cucore alone (no comparison)")
        theirs = {}

    rows = []
    for name, fn in ours.items():
        other = theirs.get(name)
        fn(16)
        n = calibrate(fn, args.target_ms)
        n_other = calibrate(other, args.target_ms) if other else 0
        if other:
            other(16)
        a, b = [], []
        for _ in range(args.repeats):
            median_ns_per_op(fn, n, args.repeats, a)
            if other:
                median_ns_per_op(other, n_other, args.repeats, b)
        ma = statistics.median(a)
        mb = statistics.median(b) if b else None
        rows.append((name, ma, mb, (ma / mb) if mb else None, notes.get(name, "")))
        print(f"  {name:45s} {ma:10.0f} ns" + (f"  {mb:10.0f} ns  ratio {ma / mb:5.2f}" if mb else ""),
              flush=True)

    lines = [
        "# Python binding beside cuda.core",
        "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- GPU: {dev.name} (device 0 of {count}), driver {cucore.driver_version()}"
        + (" (fake driver)" if fake else ""),
        f"- host: {platform.node()}, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}",
        f"- cucore {cucore.__version__} (libcucore {cucore.library_version_string()} from "
        f"{cucore.library_path()}); {their_name}",
        f"- method: {args.repeats} alternating repeats of ~{args.target_ms:g} ms per operation, median ns/op;"
        f" target ratio cucore/cuda.core <= {TARGET_RATIO:.2f}",
        "",
        "| operation | cucore (ns/op) | cuda.core (ns/op) | ratio | target met | note |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name, ma, mb, ratio, note in rows:
        met = "" if ratio is None else ("yes" if ratio <= TARGET_RATIO else "NO")
        lines.append(f"| {name} | {ma:.0f} | {'' if mb is None else f'{mb:.0f}'} | "
                     f"{'' if ratio is None else f'{ratio:.2f}'} | {met} | {note} |")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.out:
        args.out.write_text(text)
        print(f"bench_python: wrote {args.out}")
    del keep_ours, keep_theirs
    return 0


if __name__ == "__main__":
    sys.exit(main())
