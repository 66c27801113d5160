"""The GL interop rows of bench_python.py (the OpenGL issue, issue 18): cucore's, cuda.core's and the driver's
(cuda.bindings) register + unregister, map + pointer + unmap, 8 single maps and one batch map of GL buffers, each
as its host submit and its full cost. Imported by bench_python.py, which runs them beside the other rows."""
import ctypes
import pathlib
import time

import cucore

REPO = pathlib.Path(__file__).resolve().parents[2]


def add_note(notes, row, text):
    """Adds `text` to the note of `row` (several notes of one row are joined with "; ")."""
    notes[row] = f"{notes[row]}; {text}" if notes.get(row) else text


# The GL rows, each as its host submit and its full cost (bench_python.py's ROWS lists them in this order).
GL_ROWS = (
    "GL buffer register + unregister, host submit",
    "GL buffer register + unregister, full cost",
    "GL buffer map + pointer + unmap, host submit",
    "GL buffer map + pointer + unmap, full cost",
    "8 GL buffers, 8 single maps, host submit",
    "8 GL buffers, 8 single maps, full cost",
    "8 GL buffers, one batch map, host submit",
    "8 GL buffers, one batch map, full cost",
)

# ---------------------------------------------------------------------------------------------
# GL interop rows (the OpenGL issue, issue 18), as bench/graphics_bench.cpp measures them, each twice:
#
#   GL buffer register + unregister   cuGraphicsGLRegisterBuffer (no flags) + cuGraphicsUnregisterResource
#                                     of one 1 MiB GL buffer; its drain is glFinish
#   GL buffer map + pointer + unmap   cuGraphicsMapResources + cuGraphicsResourceGetMappedPointer +
#                                     cuGraphicsUnmapResources of one registered 1 MiB GL buffer on one
#                                     non-blocking stream; its drain is glFinish + stream synchronize
#   8 GL buffers, 8 single maps       the same for 8 registered GL buffers, one map and one unmap call each
#   8 GL buffers, one batch map       the same, one map call and one unmap call for all 8 (cucore's
#                                     GraphicsResource.map_all; the driver's count of 8). cuda.core has no
#                                     batch map: its column is its 8 single maps, what a cuda.core user writes
#
# "..., host submit": the calls alone; every GL_SYNC_EVERY operations (GL_BATCH_SYNC_EVERY for 8 buffers) the
# loop drains, outside the figure (the loop returns the drains' ns and ns_per_op leaves them out): undrained,
# GL's queue grows and each later call gets slower. "..., full cost": the calls and a drain after every
# operation, all timed: what a frame loop pays that maps, unmaps and hands the buffers back to GL once per
# frame (325 us per map + unmap on the H100/H200 where the submit is ~10 us; docs/performance.md, "OpenGL
# interop").
#
# The GL buffers live in one headless NVIDIA GL context (tests/python/egl_context.py, through EGL) made
# current on the benchmark thread, which runs every side. Each side maps its own GL buffers (registered
# once, before the loops), so no buffer is ever registered twice at a time; the register rows' buffer is
# registered only inside the loops. Where no NVIDIA GL context can be made, the rows are skipped with EGL's
# reason. cucore's and cuda.core's GraphicsResource read alike, so both sides run _gl_side_ops().
# ---------------------------------------------------------------------------------------------

GL_BUFFER_BYTES = 1 << 20
# As bench/graphics_bench.cpp (kSyncEvery, kBatchSyncEvery): operations between two drains (glFinish, and
# the stream for the maps) in the host submit rows.
GL_SYNC_EVERY = 64
GL_BATCH_SYNC_EVERY = 8
GL_BATCH = 8
# One GL buffer per role, GL_BATCH for the roles of the 8-buffer rows.
GL_BUFFER_ROLES = ("register", "cucore map", "cuda.core map", "driver map")
GL_BATCH_ROLES = ("cucore 8", "cuda.core 8", "driver 8")


# (host submit, full cost) of each operation, in ROWS' order.
GL_REGISTER_ROWS, GL_MAP_ROWS, GL_SINGLE8_ROWS, GL_BATCH8_ROWS = (GL_ROWS[i:i + 2] for i in range(0, 8, 2))


class GlSetup:
    """The benchmark thread's headless NVIDIA GL context and its GL buffers (GL_BUFFER_ROLES -> name,
    GL_BATCH_ROLES -> list of GL_BATCH names)."""

    def __init__(self, ctx, names):
        self.ctx, self.names = ctx, names

    def close(self, closers):
        """Unregister what the sides registered (closers, before the GL objects go), then delete the GL
        buffers and the context. Problems are printed, never raised: the results are already out."""
        for close in closers:
            try:
                close()
            except Exception as e:
                print(f"bench_python: unregistering a GL buffer failed at the end: {type(e).__name__}: {e}")
        try:
            self.ctx.make_current()
            for name in self.names.values():
                for n in (name if isinstance(name, list) else [name]):
                    self.ctx.gl.delete_buffer(n)
            self.ctx.close()
        except Exception as e:
            print(f"bench_python: closing the GL context failed at the end: {type(e).__name__}: {e}")


def gl_setup(fake):
    """(GlSetup, None), or (None, why there is no NVIDIA GL context here)."""
    if fake:
        return None, ("not measured under the fake driver (CUCORE_CUDA_DRIVER_PATH): GL interop needs the real "
                      "driver and an NVIDIA GL context")
    path = REPO / "tests" / "python" / "egl_context.py"
    try:
        import importlib.util
        spec = importlib.util.spec_from_file_location("cucore_bench_egl_context", path)
        egl = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(egl)
    except Exception as e:  # a checkout without tests/, or a broken file
        return None, f"{path} could not be loaded ({type(e).__name__}: {e})"
    try:
        ctx = egl.EglContext(0)  # device 0 of CUDA's order, the device the rows run on
    except egl.EglUnavailable as e:
        return None, f"no NVIDIA GL context on CUDA device 0: {e}"
    except Exception as e:  # anything else EGL may say: a reason, never a crash
        return None, f"no NVIDIA GL context on CUDA device 0: {type(e).__name__}: {e}"
    try:
        names = {role: ctx.gl.gen_buffer(size=GL_BUFFER_BYTES) for role in GL_BUFFER_ROLES}
        for role in GL_BATCH_ROLES:
            names[role] = [ctx.gl.gen_buffer(size=GL_BUFFER_BYTES) for _ in range(GL_BATCH)]
        ctx.gl.BindBuffer(egl.GL_ARRAY_BUFFER, 0)
        ctx.gl.Finish()
        ctx.gl.check()
        if not all(n for name in names.values() for n in (name if isinstance(name, list) else [name])):
            raise RuntimeError(f"glGenBuffers gave {names}")
    except Exception as e:
        ctx.close()
        return None, f"creating the GL buffers failed: {type(e).__name__}: {e}"
    return GlSetup(ctx, names), None


def _gl_loops(step, drain, every):
    """The two loops of one GL operation (step() does it once; drain() waits for GL and CUDA to be done with
    it): (host submit, full cost). The host submit loop drains every `every` operations and at its end and
    returns the ns it spent draining, which ns_per_op leaves out; the full cost loop drains after every
    operation, timed."""
    clock = time.perf_counter_ns

    def host_submit(n):
        paused = 0
        for i in range(n):
            step()
            if i % every == every - 1:
                t0 = clock()
                drain()
                paused += clock() - t0
        t0 = clock()
        drain()
        return paused + clock() - t0

    def full_cost(n):
        for _ in range(n):
            step()
            drain()

    return host_submit, full_cost


def _gl_put(ops, rows, step, drain, every):
    """ops[rows[0]], ops[rows[1]] = the host submit and full cost loops of `step`, each run twice first so
    that a failure shows here, not mid-measurement."""
    loops = _gl_loops(step, drain, every)
    for loop in loops:
        loop(2)
    ops.update(zip(rows, loops))


def _gl_side_ops(graphics_resource, s, gl, side, closers, batch=True):
    """One side's GL rows through its GraphicsResource class on its stream `s`: ({row: loop}, {row: why
    missing}). The map rows' resources (GL buffers names[f"{side} map"] and names[f"{side} 8"]) are
    registered here, once; their close() goes to `closers`. `batch`: the class has map_all (cucore); else
    the batch rows run the 8 single maps (cuda.core has no batch map)."""
    ops, missing = {}, {}
    from_gl_buffer = graphics_resource.from_gl_buffer
    names, finish = gl.names, gl.ctx.gl.Finish
    register_name = names["register"]
    sync = s.sync

    def drain():
        finish()
        sync()

    try:
        _gl_put(ops, GL_REGISTER_ROWS, lambda: from_gl_buffer(register_name).close(), finish, GL_SYNC_EVERY)
    except Exception as e:
        for row in GL_REGISTER_ROWS:
            missing[row] = f"{type(e).__name__}: {e}"

    try:
        res = from_gl_buffer(names[f"{side} map"])
        closers.append(res.close)  # close() unmaps first if a failure below left it mapped
        buf = res.map(stream=s)  # the mapping is right: a device pointer to the whole GL buffer
        try:
            ptr, size = int(buf.handle), int(buf.size)
        finally:
            buf.close()
        s.sync()
        if not ptr or size < GL_BUFFER_BYTES:
            raise RuntimeError(f"the mapped buffer is {size} bytes at {ptr:#x} (expected {GL_BUFFER_BYTES} bytes)")
        if res.is_mapped:
            raise RuntimeError("closing the mapped Buffer did not unmap the resource")
        map_ = res.map

        def map_pointer_unmap():
            buf = map_(stream=s)
            buf.handle  # the mapped pointer (cuGraphicsResourceGetMappedPointer's)
            buf.close()  # unmaps on the mapping stream, s

        _gl_put(ops, GL_MAP_ROWS, map_pointer_unmap, drain, GL_SYNC_EVERY)
    except Exception as e:
        for row in GL_MAP_ROWS:
            missing[row] = f"{type(e).__name__}: {e}"

    try:
        resources = []
        for name in names[f"{side} 8"]:
            resources.append(from_gl_buffer(name))
            closers.append(resources[-1].close)
        maps = [r.map for r in resources]

        def single_maps():
            bufs = [m(stream=s) for m in maps]
            for b in bufs:
                b.handle
            for b in bufs:
                b.close()  # one unmap call each

        _gl_put(ops, GL_SINGLE8_ROWS, single_maps, drain, GL_BATCH_SYNC_EVERY)
        if batch:
            map_all = graphics_resource.map_all

            def batch_map():
                with map_all(resources, s) as bufs:  # one map call; the block's end: one unmap call
                    for b in bufs:
                        b.handle

            _gl_put(ops, GL_BATCH8_ROWS, batch_map, drain, GL_BATCH_SYNC_EVERY)
        else:
            ops.update(zip(GL_BATCH8_ROWS, (ops[row] for row in GL_SINGLE8_ROWS)))
    except Exception as e:
        for row in GL_SINGLE8_ROWS + GL_BATCH8_ROWS:
            if row not in ops:  # the singles may stand where the batch failed
                missing[row] = f"{type(e).__name__}: {e}"
    return ops, missing


def cucore_gl_ops(dev, gl, why_no_gl, closers):
    """cucore's GL rows: (ops, objects to keep, {row: why skipped})."""
    if gl is None:
        return {}, [], {row: why_no_gl for row in GL_ROWS}
    s = dev.create_stream()  # non-blocking, priority 0
    ops, missing = _gl_side_ops(cucore.GraphicsResource, s, gl, "cucore", closers)
    return ops, [s], {row: f"cucore's GraphicsResource failed: {why}" for row, why in missing.items()}


def cuda_core_gl_ops(cc, s, gl, notes, closers):
    """cuda.core's GL rows (GraphicsResource, cuda.core >= 0.7) on its stream `s`; notes say what is missing.
    cuda.core has no batch map: its column of the batch rows is its 8 single maps."""
    graphics_resource = getattr(cc, "GraphicsResource", None)
    if graphics_resource is None:
        try:
            from cuda.core.experimental import GraphicsResource as graphics_resource
        except Exception:
            for row in GL_ROWS:
                add_note(notes, row, "cuda.core column missing: this cuda.core has no GraphicsResource")
            return {}
    batch = hasattr(graphics_resource, "map_all")
    ops, missing = _gl_side_ops(graphics_resource, s, gl, "cuda.core", closers, batch=batch)
    for row, why in missing.items():
        add_note(notes, row, f"cuda.core column missing: {why}")
    if not batch:
        for row in GL_BATCH8_ROWS:
            if row in ops:
                add_note(notes, row, "cuda.core column: its 8 single maps (cuda.core has no batch map)")
    return ops


def driver_gl_ops(s, gl, closers, notes):
    """The GL rows' driver calls through cuda.bindings, on cuda.core's stream; `notes` say what is missing."""
    from cuda.bindings import driver

    OK = driver.CUresult.CUDA_SUCCESS
    s_h = s.handle
    register, unregister = driver.cuGraphicsGLRegisterBuffer, driver.cuGraphicsUnregisterResource
    map_, pointer = driver.cuGraphicsMapResources, driver.cuGraphicsResourceGetMappedPointer
    unmap, stream_sync = driver.cuGraphicsUnmapResources, driver.cuStreamSynchronize
    register_name = gl.names["register"]
    finish = gl.ctx.gl.Finish

    def drain():
        finish()
        if stream_sync(s_h)[0] != OK:
            raise RuntimeError("cuStreamSynchronize failed")

    def registered(name):
        err, r = register(name, 0)
        if err != OK:
            raise RuntimeError(f"cuGraphicsGLRegisterBuffer failed: {err}")
        closers.append(lambda: unregister(r))
        return r

    def register_unregister():
        err, r = register(register_name, 0)
        if err != OK or unregister(r)[0] != OK:
            raise RuntimeError(f"cuGraphicsGLRegisterBuffer/cuGraphicsUnregisterResource failed: {err}")

    res = registered(gl.names["driver map"])

    def map_pointer_unmap():
        if map_(1, res, s_h)[0] != OK:
            raise RuntimeError("cuGraphicsMapResources failed")
        err, ptr, size = pointer(res)
        if err != OK:
            raise RuntimeError(f"cuGraphicsResourceGetMappedPointer failed: {err}")
        if unmap(1, res, s_h)[0] != OK:
            raise RuntimeError("cuGraphicsUnmapResources failed")

    res8 = [registered(name) for name in gl.names["driver 8"]]

    def single_maps():
        for r in res8:
            if map_(1, r, s_h)[0] != OK:
                raise RuntimeError("cuGraphicsMapResources failed")
        for r in res8:
            if pointer(r)[0] != OK:
                raise RuntimeError("cuGraphicsResourceGetMappedPointer failed")
        for r in res8:
            if unmap(1, r, s_h)[0] != OK:
                raise RuntimeError("cuGraphicsUnmapResources failed")

    # cuda.bindings takes the resources of a batch as the address of a CUgraphicsResource array.
    array8 = (ctypes.c_void_p * GL_BATCH)(*[int(r) for r in res8])
    address8 = ctypes.addressof(array8)

    def batch_map(_array=array8):  # holds the array the address points into
        if map_(GL_BATCH, address8, s_h)[0] != OK:
            raise RuntimeError("cuGraphicsMapResources failed")
        for r in res8:
            if pointer(r)[0] != OK:
                raise RuntimeError("cuGraphicsResourceGetMappedPointer failed")
        if unmap(GL_BATCH, address8, s_h)[0] != OK:
            raise RuntimeError("cuGraphicsUnmapResources failed")

    ops = {}
    _gl_put(ops, GL_REGISTER_ROWS, register_unregister, finish, GL_SYNC_EVERY)
    _gl_put(ops, GL_MAP_ROWS, map_pointer_unmap, drain, GL_SYNC_EVERY)
    _gl_put(ops, GL_SINGLE8_ROWS, single_maps, drain, GL_BATCH_SYNC_EVERY)
    try:
        _gl_put(ops, GL_BATCH8_ROWS, batch_map, drain, GL_BATCH_SYNC_EVERY)
    except Exception as e:  # a cuda.bindings that takes the array otherwise: the other rows stand
        for row in GL_BATCH8_ROWS:
            add_note(notes, row, f"no driver column: {type(e).__name__}: {e}")
    return ops
