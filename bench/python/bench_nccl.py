#!/usr/bin/env python3
"""Two GPUs: cucore's NCCL all-reduce and peer copies beside PyTorch, cuda.core and the raw libraries (issue 19).

Usage:
    CUCORE_LIBRARY=build/default/lib/libcucore.so python3 bench/python/bench_nccl.py [--out FILE.md]
        [--size-mib 1024] [--repeats 5] [--iters 10] [--quick] [--no-torch]

Rows, each on the same two GPUs (0 and 1) in one run:
- all-reduce of --size-mib MiB of float32 (sum, in place), reported as NCCL's bus bandwidth,
  2 * (n - 1) / n * bytes / time with n = 2 ranks: cucore's Communicator (create_all, both ranks driven by this
  process inside communicator.group()) beside torch.distributed's all_reduce (NCCL backend, one process per GPU
  through torch.multiprocessing's spawn) and beside NCCL called directly through ctypes (ncclCommInitAll,
  ncclGroupStart, ncclAllReduce, ncclGroupEnd) on the same libnccl cucore loaded, the same buffers and streams.
- a peer copy of --size-mib MiB, device 0 -> 1 and 1 -> 0, on the destination device's stream, between buffers of
  two pools that grant each other's device access: cucore's Buffer.copy_from beside cuda.core's Buffer.copy_to over
  the same memory (Buffer.from_handle) and stream, and beside cuMemcpyPeerAsync through ctypes.
Each side runs --iters operations back to back then synchronizes, --repeats times, alternating sides (PyTorch in
its own processes, first); per side the minimum and the median time per operation are reported, and the ratios
cucore / other from the minima (target <= 1.02 in time: these are the GPUs' own time on every side).

NCCL_NVLS_ENABLE=0 (NVLink multicast stays off) is set for this process and PyTorch's. Fewer than 2 GPUs, no
driver, or the fake driver: nothing is measured, the reason is printed, and it exits 0; without NCCL, PyTorch or
cuda.core, their rows or columns are skipped with the reason. bench_python.py runs this script (not with --quick)
and appends its table to its own --out.
"""
import argparse
import ctypes
import datetime
import os
import pathlib
import platform
import socket
import statistics
import sys
import time

os.environ["NCCL_NVLS_ENABLE"] = "0"  # before any NCCL is loaded, here or in PyTorch's processes

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "bindings" / "python"))

import cucore  # noqa: E402
from cucore import communicator  # noqa: E402

TARGET_RATIO = 1.02
NCCL_FLOAT32, NCCL_SUM = 7, 0  # ncclFloat32, ncclSum


def bus_bandwidth(nbytes, seconds, ranks=2):
    """NCCL's bus bandwidth of an all-reduce in GB/s: 2 (n - 1) / n of the bytes per second."""
    return 2 * (ranks - 1) / ranks * nbytes / seconds / 1e9


class Side:
    """One side of a row: seconds per operation of each repeat."""

    def __init__(self, name, times):
        self.name = name
        self.times = times
        self.min = min(times)
        self.median = statistics.median(times)


def measure(fns, iters, repeats):
    """{name: Side}: each fn(iters) runs `iters` operations and synchronizes; repeats alternate the sides."""
    for fn in fns.values():
        fn(2)  # warm up (and fail here, not in the middle)
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(iters)
            times[name].append((time.perf_counter() - t0) / iters)
    return {name: Side(name, t) for name, t in times.items()}


# ---- all-reduce: cucore -------------------------------------------------------------------------------------

def cucore_all_reduce(devs, bufs, streams):
    comms = communicator.Communicator.create_all(devs)

    def run(n):
        for _ in range(n):
            with communicator.group():
                for c, b, s in zip(comms, bufs, streams):
                    c.all_reduce(b, dtype="float32", stream=s)
        for s in streams:
            s.sync()
    return run, comms


# ---- all-reduce: NCCL through ctypes -----------------------------------------------------------------------

def nccl_path():
    """The libnccl cucore loaded: CUCORE_NCCL_PATH (which cucore.communicator sets to a pip-installed NCCL when
    unset), else the system loader's libnccl.so.2."""
    return os.environ.get("CUCORE_NCCL_PATH") or "libnccl.so.2"


def raw_all_reduce(devs, bufs, streams):
    nccl = ctypes.CDLL(nccl_path())
    V = ctypes.c_void_p
    for name, args in (("ncclCommInitAll", [ctypes.POINTER(V), ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
                       ("ncclGroupStart", []), ("ncclGroupEnd", []), ("ncclCommDestroy", [V]),
                       ("ncclAllReduce", [V, V, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, V, V])):
        fn = getattr(nccl, name)
        fn.restype, fn.argtypes = ctypes.c_int, args
    n = len(devs)
    comms = (V * n)()
    ordinals = (ctypes.c_int * n)(*[d.device_id for d in devs])
    if nccl.ncclCommInitAll(comms, n, ordinals):
        raise RuntimeError("ncclCommInitAll failed")
    count = bufs[0].size // 4
    ptrs = [b.handle for b in bufs]
    raw_streams = [s.handle for s in streams]
    start, end, all_reduce = nccl.ncclGroupStart, nccl.ncclGroupEnd, nccl.ncclAllReduce

    def run(k):
        for _ in range(k):
            if start():
                raise RuntimeError("ncclGroupStart failed")
            for p, c, s in zip(ptrs, comms, raw_streams):
                if all_reduce(p, p, count, NCCL_FLOAT32, NCCL_SUM, c, s):
                    raise RuntimeError("ncclAllReduce failed")
            if end():
                raise RuntimeError("ncclGroupEnd failed")
        for s in streams:
            s.sync()

    def close():
        for s in streams:
            s.sync()
        for c in comms:
            nccl.ncclCommDestroy(c)
    return run, close


# ---- all-reduce: torch.distributed, one process per GPU -------------------------------------------------------

def _torch_rank(rank, nbytes, iters, repeats, port, results):
    """One rank of PyTorch's side (spawned): times of `repeats` x `iters` all-reduces, put by rank 0."""
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        t = torch.zeros(nbytes // 4, dtype=torch.float32, device=f"cuda:{rank}")
        for _ in range(2):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            dist.barrier(device_ids=[rank])
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) / iters)
        if rank == 0:
            try:
                import torch.cuda.nccl as torch_nccl
                version = torch_nccl.version()  # a tuple (2, 27, 3), or an int in older releases
                version = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
            except Exception:  # noqa: BLE001
                version = "?"
            results.put((times, f"torch {torch.__version__}, its NCCL {version}"))
    finally:
        dist.destroy_process_group()


def torch_all_reduce(nbytes, iters, repeats):
    """(Side, description) of PyTorch's all-reduce, or (None, why not)."""
    try:
        import torch
        import torch.multiprocessing as tmp
    except Exception as e:  # noqa: BLE001
        return None, f"PyTorch is not importable in {sys.executable}: {e}"
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        return None, "PyTorch sees fewer than 2 GPUs"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ctx = tmp.get_context("spawn")
    results = ctx.SimpleQueue()
    try:
        tmp.spawn(_torch_rank, args=(nbytes, iters, repeats, port, results), nprocs=2, join=True)
    except Exception as e:  # noqa: BLE001
        return None, f"torch.distributed failed: {type(e).__name__}: {e}"
    times, what = results.get()
    return Side("torch.distributed", times), what


# ---- peer copies ----------------------------------------------------------------------------------------------

def _driver():
    cuda = ctypes.CDLL(os.environ.get("CUCORE_CUDA_DRIVER_PATH") or "libcuda.so.1")
    V = ctypes.c_void_p
    cuda.cuMemcpyPeerAsync.restype = ctypes.c_int
    cuda.cuMemcpyPeerAsync.argtypes = [ctypes.c_uint64, V, ctypes.c_uint64, V, ctypes.c_size_t, V]
    cuda.cuDevicePrimaryCtxRetain.restype = ctypes.c_int
    cuda.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(V), ctypes.c_int]
    return cuda


def copy_sides(devs, size, notes, with_cuda_core=True):
    """{direction: {side: fn}} of the peer copies; what they need is kept in the returned list."""
    d0, d1 = devs
    keep = []
    pools = []
    for d, other in ((d0, d1), (d1, d0)):
        mr = cucore.DeviceMemoryResource(d, cucore.DeviceMemoryResourceOptions())
        if other.can_access_peer(d):
            mr.peer_accessible_by.add(other)
            other.enable_peer_access(d)
        else:
            notes.append(f"device {other.device_id} cannot access device {d.device_id}: copies go through the host")
        pools.append(mr)
    streams = [d0.create_stream(), d1.create_stream()]
    bufs = [mr.allocate(size, stream=s) for mr, s in zip(pools, streams)]
    for b, s in zip(bufs, streams):
        b.fill(1, stream=s)
    for s in streams:
        s.sync()
    keep += [pools, streams, bufs]
    try:
        cuda = _driver()
        ctxs = []
        for d in devs:
            c = ctypes.c_void_p()
            if cuda.cuDevicePrimaryCtxRetain(ctypes.byref(c), d.device_id):
                raise RuntimeError("cuDevicePrimaryCtxRetain failed")
            ctxs.append(c.value)
    except (OSError, AttributeError, RuntimeError) as e:  # a fake driver without cuMemcpyPeerAsync
        cuda = None
        notes.append(f"no cuMemcpyPeerAsync column: {type(e).__name__}: {e}")
    try:
        if not with_cuda_core:
            raise RuntimeError("cuda.core drives the real driver, not the fake one")
        import cuda.core as cc
        cc_streams = []
        for d, s in zip(devs, streams):
            cc_dev = cc.Device(d.device_id)
            cc_dev.set_current()  # cuda.core makes streams only on a device made current through it
            cc_streams.append(cc_dev.create_stream(s))  # cucore's stream, through __cuda_stream__
        cc_bufs = [cc.Buffer.from_handle(b.handle, size) for b in bufs]  # the same memory
        keep += [cc_bufs, cc_streams]
        notes.append(f"cuda.core column: cuda.core {getattr(cc, '__version__', '?')} Buffer.copy_to")
    except Exception as e:  # noqa: BLE001
        cc_bufs = None
        notes.append(f"no cuda.core column: {type(e).__name__}: {e}")
    d0.set_current()
    sides = {}
    for src, dst in ((0, 1), (1, 0)):
        s = streams[dst]
        a, b = bufs[src], bufs[dst]

        def ours(n, a=a, b=b, s=s):
            for _ in range(n):
                b.copy_from(a, stream=s)
            s.sync()

        def raw(n, a=a.handle, b=b.handle, src=src, dst=dst, s=s, h=s.handle):
            copy = cuda.cuMemcpyPeerAsync
            for _ in range(n):
                if copy(b, ctxs[dst], a, ctxs[src], size, h):
                    raise RuntimeError("cuMemcpyPeerAsync failed")
            s.sync()
        row = {"cucore": ours}
        if cc_bufs is not None:
            def theirs(n, a=cc_bufs[src], b=cc_bufs[dst], cs=cc_streams[dst], s=s):
                for _ in range(n):
                    a.copy_to(b, stream=cs)
                cs.sync()
            row["cuda.core"] = theirs
        if cuda is not None:
            row["cuMemcpyPeerAsync"] = raw
        sides[f"peer copy {src} -> {dst}"] = row
    return sides, keep


# ---- report ---------------------------------------------------------------------------------------------------

def _ms(x):
    return "" if x is None else f"{x * 1e3:.3f}"


def _ratio(x):
    return "" if x is None else f"{x:.2f}"


def _gbs(x):
    return "" if x is None else f"{x:.1f}"


def skip(out, reason):
    """Nothing measured: the reason, printed and (with --out) written as this table's only line; exit status 0."""
    print(f"bench_nccl: skipped, {reason}")
    if out:
        out.write_text(f"# Two GPUs: NCCL all-reduce and peer copies (bench_nccl.py)\n\n- skipped: {reason}\n")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, help="write the results as markdown to this file")
    ap.add_argument("--size-mib", type=int, default=1024, help="bytes per all-reduce and per copy, in MiB")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10, help="operations per repeat")
    ap.add_argument("--quick", action="store_true", help="3 repeats of 3 (a smoke test)")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch's column out")
    ap.add_argument("--fake-ok", action="store_true",
                    help="run under the fake driver too (a smoke test of this script: no PyTorch or cuda.core)")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.iters = 3, 3
    started = time.monotonic()
    try:
        count = cucore.Device.count()
    except cucore.LibraryNotFoundError as e:
        print(f"bench_nccl: libcucore could not be loaded:\n{e}", file=sys.stderr)
        return 2
    except cucore.CUDAError as e:
        return skip(args.out, f"no GPU here ({e})")
    if count < 2:
        return skip(args.out, f"it needs 2 GPUs and {count} is visible")
    fake = bool(os.environ.get("CUCORE_CUDA_DRIVER_PATH"))
    if fake and not args.fake_ok:
        return skip(args.out, "under the fake driver (CUCORE_CUDA_DRIVER_PATH) there is nothing real to measure")
    size = args.size_mib << 20
    devs = [cucore.Device(0), cucore.Device(1)]
    notes, rows, skipped = [], [], []

    # All-reduce: PyTorch first, in its own processes, before this process holds any GPU memory.
    try:
        nccl_version = communicator.library_version()
    except cucore.NotSupportedError as e:
        nccl_version = None
        skipped.append(f"all-reduce: NCCL is missing: {e}")
    if nccl_version is not None:
        torch_side, torch_what = (None, "--no-torch or the fake driver") if args.no_torch or fake else \
            torch_all_reduce(size, args.iters, args.repeats)
        if torch_side is None:
            notes.append(f"no torch.distributed column: {torch_what}")
        else:
            notes.append(f"torch.distributed column: {torch_what}")
        streams = [d.create_stream() for d in devs]
        bufs = [d.allocate(size, stream=s) for d, s in zip(devs, streams)]
        for b, s in zip(bufs, streams):
            b.fill(0, stream=s)
            s.sync()
        ours, comms = cucore_all_reduce(devs, bufs, streams)
        raw, close_raw = raw_all_reduce(devs, bufs, streams)
        sides = measure({"cucore": ours, "ctypes NCCL": raw}, args.iters, args.repeats)
        close_raw()
        for c in comms:
            c.close()
        rows.append((f"all-reduce {args.size_mib} MiB float32", "bus", sides["cucore"], torch_side,
                     sides["ctypes NCCL"]))
        del bufs
        notes.append(f"NCCL {nccl_version} from {nccl_path()}")
    sides_by_row, keep = copy_sides(devs, size, notes, with_cuda_core=not fake)
    for name, fns in sides_by_row.items():
        sides = measure(fns, args.iters, args.repeats)
        rows.append((name, "copy", sides["cucore"], sides.get("cuda.core"), sides.get("cuMemcpyPeerAsync")))
    del keep

    header = ("| operation | cucore min (ms) | cucore median (ms) | cucore GB/s | reference | reference min (ms) "
              "| reference median (ms) | reference GB/s | cucore / reference (minima) | target met | raw min (ms) "
              "| raw GB/s | cucore / raw (minima) |")
    lines = [
        "# Two GPUs: NCCL all-reduce and peer copies (bench_nccl.py)",
        "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- GPUs: {devs[0].name} x {count} (devices 0 and 1), driver {cucore.driver_version()}; host "
        f"{platform.node()}, Python {platform.python_version()}",
        f"- cucore {cucore.__version__} (libcucore {cucore.version_string()} from {cucore.library_path()})",
        f"- method: {args.repeats} alternating repeats of {args.iters} operations of {args.size_mib} MiB, then a "
        f"synchronize; per side the minimum and the median time per operation; all-reduce GB/s is NCCL's bus "
        f"bandwidth 2(n-1)/n x bytes / time (n = 2), copies bytes / time; NCCL_NVLS_ENABLE=0; "
        f"{time.monotonic() - started:.0f} s in all",
        "",
        header,
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]

    def rate(kind, side):
        if side is None:
            return None
        return bus_bandwidth(size, side.min) if kind == "bus" else size / side.min / 1e9

    print(f"  {'operation':32s} {'cucore ms':>10s} {'GB/s':>7s} {'reference':>18s} {'ms':>9s} {'GB/s':>7s} "
          f"{'ratio':>6s} {'raw ms':>9s} {'GB/s':>7s} {'ratio':>6s}")
    for name, kind, a, b, r in rows:
        ratio = a.min / b.min if b else None
        raw_ratio = a.min / r.min if r else None
        met = "" if ratio is None else ("yes" if ratio <= TARGET_RATIO else "NO")
        ref = b.name if b else "(none)"
        print(f"  {name:32s} {_ms(a.min):>10s} {_gbs(rate(kind, a)):>7s} {ref:>18s} {_ms(b and b.min):>9s} "
              f"{_gbs(rate(kind, b)):>7s} {_ratio(ratio):>6s} {_ms(r and r.min):>9s} "
              f"{_gbs(rate(kind, r)):>7s} {_ratio(raw_ratio):>6s}", flush=True)
        lines.append(f"| {name} | {_ms(a.min)} | {_ms(a.median)} | {_gbs(rate(kind, a))} | {ref} | "
                     f"{_ms(b and b.min)} | {_ms(b and b.median)} | {_gbs(rate(kind, b))} | "
                     f"{_ratio(ratio)} | {met} (<= {TARGET_RATIO:.2f}) | {_ms(r and r.min)} | "
                     f"{_gbs(rate(kind, r))} | {_ratio(raw_ratio)} |")
    lines.append("")
    lines += [f"- note: {n}" for n in notes] + [f"- skipped: {s}" for s in skipped]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.out:
        args.out.write_text(text)
        print(f"bench_nccl: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
