"""cuda.core-style scenarios of the top-level package: devices, contexts, streams, events, memory resources,
buffers, IPC descriptors, compilation and launch. Each test body uses only cuda.core 1.2's public API through
the `core` fixture, so it runs unchanged with `import cucore as core` and, where cuda.core is importable (the
GPU server), with `import cuda.core as core` (conftest.py). Results are read back and compared."""
import array
import ctypes
import pickle
import uuid

import pytest

from cuda_core_style import compile_cubin, needs_real_gpu, read_bytes

FILL_INDEX = r"""
extern "C" __global__ void fill_index(unsigned *out, unsigned n, unsigned scale) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i * scale;
}
template <typename T> __global__ void add_one(T *data, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += T(1);
}
"""


def test_device_describes_itself(core_device, core):
    dev = core_device
    assert dev.device_id == 0 and int(dev) == 0
    assert core.Device(0) is dev, "one Device object per ordinal and thread"
    assert dev in core.Device.get_all_devices()
    assert isinstance(dev.name, str) and dev.name
    cc = dev.compute_capability
    props = dev.properties
    assert (cc.major, cc.minor) == (props.compute_capability_major, props.compute_capability_minor)
    assert dev.arch == f"{cc.major}{cc.minor}"
    assert props.multiprocessor_count > 0 and type(props.multiprocessor_count) is int
    assert type(props.memory_pools_supported) is bool and type(props.unified_addressing) is bool
    assert isinstance(dev.pci_bus_id, str) and ":" in dev.pci_bus_id
    assert isinstance(dev.uuid, str) and len(dev.uuid) >= 32


def test_set_current_with_a_context_gives_back_the_one_it_replaces(core_device, core):
    dev = core_device
    primary = dev.context
    assert dev.set_current() is None
    previous = dev.set_current(primary)
    assert previous == primary, "the primary context was current"
    assert not primary.is_green


def test_streams_order_work_and_events_time_it(core_device, core):
    dev = core_device
    s1 = dev.create_stream()
    s2 = dev.create_stream(options=core.StreamOptions(nonblocking=True))
    assert s2.is_nonblocking
    version, handle = s1.__cuda_stream__()
    assert version == 0 and handle == int(s1.handle)
    wrapped = core.Stream.from_handle(int(s1.handle))
    assert int(wrapped.handle) == int(s1.handle)
    start = s1.record(options=core.EventOptions(timing_enabled=True))
    buf = dev.allocate(1 << 20, stream=s1)
    buf.fill(0x5A, stream=s1)
    end = s1.record(options=core.EventOptions(timing_enabled=True))
    s2.wait(end)  # s2 runs after the fill
    out = dev.allocate(1 << 20, stream=s2)
    out.copy_from(buf, stream=s2)
    end.sync()
    assert end.is_done and start.is_timing_enabled
    assert (end - start) >= 0.0
    assert read_bytes(core, out, s2) == b"\x5a" * (1 << 20)
    buf.close(s2)
    s1.close()
    assert s1.is_closed


def test_device_pools_own_what_they_create(core_device, core):
    dev = core_device
    s = dev.create_stream()
    current = core.DeviceMemoryResource(dev)
    assert not current.is_handle_owned and current.device_id == 0
    assert current.is_device_accessible and not current.is_host_accessible
    own = core.DeviceMemoryResource(dev, core.DeviceMemoryResourceOptions(max_size=1 << 24))
    assert own.is_handle_owned
    b = own.allocate(4096, stream=s)
    assert b.memory_resource is own and b.size == 4096 and b.is_device_accessible
    b.fill(3, stream=s)
    assert read_bytes(core, b, s) == b"\x03" * 4096
    b.close(s)
    s.sync()


def test_pinned_and_managed_resources_default_to_the_drivers_current_pools(core_device, core):
    dev = core_device
    s = dev.create_stream()
    pinned = core.PinnedMemoryResource()
    assert not pinned.is_handle_owned and pinned.is_host_accessible and pinned.device_id == -1
    hb = pinned.allocate(64, stream=s)
    s.sync()
    ctypes.memset(hb.handle, 0x21, 64)  # host-accessible memory
    db = dev.allocate(64, stream=s)
    db.copy_from(hb, stream=s)
    assert read_bytes(core, db, s) == b"\x21" * 64
    assert core.PinnedMemoryResource(core.PinnedMemoryResourceOptions()).is_handle_owned

    managed = core.ManagedMemoryResource()
    assert not managed.is_handle_owned and managed.is_managed
    mb = managed.allocate(128, stream=s)
    assert isinstance(mb, core.ManagedBuffer) and mb.is_managed
    mb.fill(0x33, stream=s)
    s.sync()
    assert ctypes.string_at(mb.handle, 128) == b"\x33" * 128
    own = core.ManagedMemoryResource(core.ManagedMemoryResourceOptions(preferred_location=0,
                                                                      preferred_location_type="device"))
    assert own.is_handle_owned and own.preferred_location == ("device", 0)
    for b in (hb, db, mb):
        b.close(s)
    s.sync()


def test_virtual_memory_grows_in_place(core_device, core):
    dev = core_device
    if not dev.properties.virtual_memory_management_supported:
        pytest.skip("no virtual memory management")
    s = dev.create_stream()
    vmm = core.VirtualMemoryResource(dev, core.VirtualMemoryResourceOptions(handle_type=None))
    b = vmm.allocate(1 << 21, stream=s)
    b.fill(9, stream=s)
    s.sync()
    grown = vmm.modify_allocation(b, 1 << 22)
    assert grown.size >= 1 << 22
    assert read_bytes(core, grown, s)[: 1 << 21] == b"\x09" * (1 << 21), "the contents survive the growth"
    grown.close()


def test_buffer_from_handle_with_a_resource_gives_the_memory_back_through_it(core_device, core):
    dev = core_device
    s = dev.create_stream()
    backing = dev.allocate(256, stream=s)

    class Tracking(core.MemoryResource):
        def __init__(self):
            self.freed = []

        def allocate(self, size, stream=None):
            raise NotImplementedError

        def deallocate(self, ptr, size, stream=None):
            self.freed.append((int(ptr), size))

        @property
        def is_device_accessible(self):
            return True

        @property
        def is_host_accessible(self):
            return False

        @property
        def device_id(self):
            return 0

    mr = Tracking()
    b = core.Buffer.from_handle(backing.handle, 256, mr, stream=s)
    assert b.memory_resource is mr and b.owner is None and int(b.handle) == int(backing.handle)
    b.close(s)
    assert mr.freed == [(int(backing.handle), 256)]
    plain = core.Buffer.from_handle(backing.handle, 256)
    plain.close()
    assert mr.freed == [(int(backing.handle), 256)], "a buffer without mr or owner frees nothing"
    backing.close(s)
    s.sync()


def test_ipc_descriptors_are_picklable_objects(core_device, core):
    dev = core_device
    s = dev.create_stream()
    try:
        mr = core.DeviceMemoryResource(dev, core.DeviceMemoryResourceOptions(ipc_enabled=True))
    except Exception as e:  # noqa: BLE001  (a platform or driver without IPC pools)
        pytest.skip(f"no IPC-enabled memory pool here: {e}")
    assert mr.is_ipc_enabled and not mr.is_mapped
    assert isinstance(mr.uuid, uuid.UUID)
    handle = mr.allocation_handle
    assert handle is mr.allocation_handle, "made once, kept by the resource"
    assert isinstance(handle.uuid, uuid.UUID) and handle.uuid == mr.uuid
    b = mr.allocate(64, stream=s)
    desc = b.ipc_descriptor
    assert desc.size == 64 and not b.is_mapped
    assert pickle.loads(pickle.dumps(desc)).size == 64
    ev = s.record(options=core.EventOptions(ipc_enabled=True))  # cuda.core makes interprocess events recorded
    assert ev.is_ipc_enabled
    edesc = ev.ipc_descriptor
    assert type(pickle.loads(pickle.dumps(edesc))) is type(edesc)
    b.close(s)
    s.sync()


def test_compile_launch_and_read_back(core_device, core):
    needs_real_gpu()
    dev = core_device
    s = dev.create_stream()
    prog = core.Program(FILL_INDEX, "c++", options=core.ProgramOptions(arch=f"sm_{dev.arch}", std="c++17"))
    assert prog.backend == "NVRTC" and prog.pch_status is None
    mod = prog.compile("cubin", name_expressions=("add_one<unsigned>",))
    assert mod.code_type == "cubin" and "add_one<unsigned>" in mod.symbol_mapping
    n = 1000
    buf = dev.allocate(n * 4, stream=s)
    config = core.LaunchConfig(grid=(n + 127) // 128, block=128)
    assert config.is_cooperative is False and config.grid == ((n + 127) // 128, 1, 1)
    core.launch(s, config, mod.get_kernel("fill_index"), buf, ctypes.c_uint32(n), ctypes.c_uint32(3))
    core.launch(s, config, mod.get_kernel("add_one<unsigned>"), buf, ctypes.c_uint32(n))
    values = array.array("I", read_bytes(core, buf, s))
    assert list(values) == [3 * i + 1 for i in range(n)]
    assert mod.get_module() != 0


def test_object_code_from_cubin_with_a_symbol_mapping(core_device, core):
    dev = core_device
    mod = compile_cubin(core, dev, FILL_INDEX, name_expressions=("add_one<int>",))
    again = core.ObjectCode.from_cubin(mod.code, name="again", symbol_mapping=mod.symbol_mapping)
    assert again.name == "again" and again.symbol_mapping == mod.symbol_mapping
    s = dev.create_stream()
    buf = dev.allocate(16, stream=s)
    buf.fill(0, stream=s)
    core.launch(s, core.LaunchConfig(grid=1, block=4), again.get_kernel("add_one<int>"), buf, ctypes.c_uint32(4))
    assert array.array("i", read_bytes(core, buf, s)).tolist() == [1, 1, 1, 1]


def test_compile_errors_are_nvrtc_errors_with_the_log(core):
    prog = core.Program("__global__ void broken( { }", "c++", options=core.ProgramOptions(arch="sm_90"))
    with pytest.raises(Exception) as info:
        prog.compile("cubin")
    assert type(info.value).__name__ == "NVRTCError"
    assert "error" in str(info.value).lower()


def test_program_options_keep_cuda_cores_fields_and_defaults(core):
    o = core.ProgramOptions(arch="sm_90", restrict=True, split_compile=2, builtin_move_forward=False)
    assert o.name == "default_program" and o.restrict and o.split_compile == 2
    assert core.LinkerOptions().name == "<default linker>"
    flags = core.LinkerOptions(arch="sm_90", time=True, kernels_used=["k"], max_register_count=32).as_bytes()
    assert flags[0] == b"-arch=sm_90" and b"-time" in flags and b"-kernels-used=k" in flags
    assert b"-maxrregcount=32" in flags


def test_typing_enums_are_cuda_cores_strings(core):
    t = core.typing
    assert t.SourceCodeType.CXX == "c++" and t.ObjectCodeFormatType.CUBIN == "cubin"
    assert t.PCHStatusType.CREATED == "created" and t.VirtualMemoryAccessType.READ_WRITE == "rw"
    assert t.ManagedMemoryLocationType.HOST_NUMA == "host_numa"
    assert t.WorkqueueSharingScopeType.GREEN_CTX_BALANCED == "green_ctx_balanced"
    assert "__cuda_stream__" in dir(t.IsStreamType)  # a Protocol (cucore's also checks at run time)


def test_object_code_pickles_as_its_code(core):
    mod = core.Program(FILL_INDEX, "c++", options=core.ProgramOptions(arch="sm_90")).compile(
        "ptx", name_expressions=("add_one<int>",))
    again = pickle.loads(pickle.dumps(mod))
    assert again.code == mod.code and again.code_type == "ptx"
    assert again.symbol_mapping == mod.symbol_mapping
