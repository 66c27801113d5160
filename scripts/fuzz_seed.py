#!/usr/bin/env python3
"""Writes the hand-made seeds of the fuzz corpora (tests/fuzz/corpus/<target>/seed-*):
inputs in the format each target reads (see the comment at the top of each
tests/fuzz/*_fuzzer.cpp) that reach past the first checks. The rest of each
corpus was grown from these by short runs and minimised (scripts/fuzz.sh, then
libFuzzer's -merge=1). Usage: scripts/fuzz_seed.py"""
import os
import struct

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz", "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(root, target), exist_ok=True)
    with open(os.path.join(root, target, "seed-" + name), "wb") as f:
        f.write(data)


# ipc_descriptor: mode byte (1 event, 2 patch a genuine descriptor, 4 repair the checksum).
write("ipc_descriptor", "genuine-buffer", bytes([2]))
write("ipc_descriptor", "genuine-event", bytes([3]))
write("ipc_descriptor", "patched-size", bytes([6, 33, 0x10]))
write("ipc_descriptor", "patched-kind", bytes([6, 12, 2]))
write("ipc_descriptor", "patched-reserved", bytes([6, 110, 1]))
write("ipc_descriptor", "raw-buffer", bytes([4]) + b"CUCOREIB" + bytes(120))
write("ipc_descriptor", "raw-event", bytes([5]) + b"CUE\x01" + bytes(68))

# program_cache: mode byte (1: repair magic, version, key and checksum), then the entry.
def entry(type_, payload, names, trailing=b""):
    body = b"CUCOREPC" + struct.pack("<II", 1, type_) + bytes(32)
    body += struct.pack("<Q", len(payload)) + payload + struct.pack("<I", len(names))
    for expression, lowered in names:
        body += struct.pack("<I", len(expression)) + expression + struct.pack("<I", len(lowered)) + lowered
    return bytes([1]) + body + trailing + bytes(8)


write("program_cache", "valid", entry(4, b"FAKECUBIN\nkernel k\n", [(b"f<int>", b"lowered_f_int_"), (b"g", b"lowered_g")]))
write("program_cache", "valid-empty", entry(4, b"", []))
write("program_cache", "bad-type", entry(9, b"x", []))
write("program_cache", "trailing", entry(4, b"abc", [], b"\0"))
write("program_cache", "unrepaired", entry(4, b"abc", [])[1:][:40])
