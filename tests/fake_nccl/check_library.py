#!/usr/bin/env python3
"""libcucore_fake_nccl.so as the Python and Rust tests use it: libcucore loads it
through CUCORE_NCCL_PATH next to the fake driver (CUCORE_CUDA_DRIVER_PATH, whose
streams run on worker threads); a grouped all-reduce and a send/receive pair
over two devices are read back, the fake_nccl_* controls answer, and an
injected failure comes back as a status naming NCCL's error.

Usage: check_library.py LIBRARY_DIR (holding libcucore.so, libcucore_fake_cuda.so
and libcucore_fake_nccl.so)."""
import ctypes
import os
import struct
import sys
import time

lib_dir = sys.argv[1]
os.environ["CUCORE_CUDA_DRIVER_PATH"] = os.path.join(lib_dir, "libcucore_fake_cuda.so")
os.environ["CUCORE_NCCL_PATH"] = os.path.join(lib_dir, "libcucore_fake_nccl.so")
cu = ctypes.CDLL(os.path.join(lib_dir, "libcucore.so"))
fake = ctypes.CDLL(os.environ["CUCORE_NCCL_PATH"])  # the same library libcucore loads
cu.cucore_last_error_message.restype = ctypes.c_char_p
P = ctypes.c_void_p
U64 = ctypes.c_uint64
FLOAT32, SUM, INT32_TYPE = 8, 0, 3


def ok(status, what):
    if status != 0:
        sys.exit(f"{what}: status {status}: {cu.cucore_last_error_message().decode()}")


version = ctypes.c_int()
ok(cu.cucore_communicator_library_version(ctypes.byref(version)), "library_version")
assert version.value == 22809, version.value
devices = (P * 2)()
for i in range(2):
    ok(cu.cucore_device_get(i, ctypes.byref(P.from_buffer(devices, i * ctypes.sizeof(P)))), "device_get")
comms = (P * 2)()
ok(cu.cucore_communicator_create_all(devices, ctypes.c_size_t(2), comms), "create_all")
assert fake.fake_nccl_live_comms() == 2
streams, buffers, received = [], [], []
for i in range(2):
    s = P()
    ok(cu.cucore_stream_create(P(devices[i]), None, ctypes.byref(s)), "stream_create")
    streams.append(s)
    for group in (buffers, received):
        b = P()
        ok(cu.cucore_device_allocate(P(devices[i]), U64(16), s, ctypes.byref(b)), "device_allocate")
        group.append(b)
    data = struct.pack("4f", *[float(i + 1 + k) for k in range(4)])
    ok(cu.cucore_buffer_copy_from_host(buffers[i], U64(0), data, U64(16), s), "copy_from_host")


def read(i, b, fmt):
    out = ctypes.create_string_buffer(16)
    ok(cu.cucore_buffer_copy_to_host(b, U64(0), out, U64(16), streams[i]), "copy_to_host")
    ok(cu.cucore_stream_synchronize(streams[i]), "synchronize")
    return struct.unpack(fmt, out.raw)


ok(cu.cucore_communicator_group_start(), "group_start")
for i in range(2):
    ok(cu.cucore_communicator_all_reduce(P(comms[i]), buffers[i], buffers[i], U64(0), FLOAT32, SUM, streams[i]),
       "all_reduce")
ok(cu.cucore_communicator_group_end(), "group_end")
for i in range(2):
    assert read(i, buffers[i], "4f") == (3.0, 5.0, 7.0, 9.0), read(i, buffers[i], "4f")
# Each rank sends its sums to the other.
ok(cu.cucore_communicator_group_start(), "group_start")
for i in range(2):
    ok(cu.cucore_communicator_send(P(comms[i]), buffers[i], U64(0), FLOAT32, 1 - i, streams[i]), "send")
    ok(cu.cucore_communicator_recv(P(comms[i]), received[i], U64(0), FLOAT32, 1 - i, streams[i]), "recv")
ok(cu.cucore_communicator_group_end(), "group_end")
for i in range(2):
    assert read(i, received[i], "4f") == (3.0, 5.0, 7.0, 9.0)
text = ctypes.create_string_buffer(256)
assert fake.fake_nccl_completed_operations() == 3, fake.fake_nccl_completed_operations()
assert fake.fake_nccl_faults(text, 256) == 0, text.value
assert fake.fake_nccl_pending_operations() == 0
# An injected failure comes back as a status naming NCCL's error and the injection.
fake.fake_nccl_fail_entry(b"ncclAllReduce", 5)
status = cu.cucore_communicator_all_reduce(P(comms[0]), buffers[0], buffers[0], U64(0), FLOAT32, SUM, streams[0])
message = cu.cucore_last_error_message().decode()
fake.fake_nccl_fail_entry(None, 0)
assert status != 0 and "ncclAllReduce failed: ncclInvalidUsage" in message, (status, message)
assert "injected failure of ncclAllReduce" in message, message
for i in range(2):
    for b in (buffers[i], received[i]):
        ok(cu.cucore_buffer_release(b), "buffer_release")
    ok(cu.cucore_stream_release(streams[i]), "stream_release")
    ok(cu.cucore_communicator_release(P(comms[i])), "communicator_release")
    ok(cu.cucore_device_release(P(devices[i])), "device_release")
# The last holds go on libcucore's release thread once the streams have passed them.
deadline = time.monotonic() + 10
while fake.fake_nccl_live_comms() and time.monotonic() < deadline:
    time.sleep(0.01)
assert fake.fake_nccl_live_comms() == 0, fake.fake_nccl_live_comms()
print("libcucore_fake_nccl.so: all-reduce, send/receive, controls and failures OK")
