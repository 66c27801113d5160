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

# options: the target reads its decisions from the input's end (FuzzedDataProvider's integers): `decisions`
# lists them in the order the target takes them (one byte each, for ranges below 256), the selector first.
def decisions(*taken):
    return bytes(reversed(taken))


# Arrays (selector 10): a 2D layered float x 4 array of 16 x 8, 3 layers, surface load/store; 4 levels.
write("options", "array-layered", decisions(
    10, 0,          # arrays; the options' own struct_size
    0, 0,           # format: from the table, FLOAT32
    0, 4,           # num_channels 4
    1, 1,           # kind LAYERED
    1, 1,           # flags SURFACE_LOAD_STORE
    1,              # reserved0 0
    0, 15, 0, 8,    # width 1 + 15, height 8
    0, 0, 0, 3,     # depth 0, layers 3
    0, 1,           # device 0, options given
    1, 4))          # 4 levels
# A BC7 2D array of 20 x 12 (partial blocks), and a mipmapped array of 5 levels.
write("options", "array-bc7", decisions(10, 0, 0, 14, 0, 0, 1, 0, 1, 0, 1, 0, 19, 0, 12, 0, 0, 0, 0, 0, 1, 1, 5))
# Textures (selector 12): over a uint8 x 4 array with surface load/store, wrap/clamp/border, linear filtering
# of normalized floats, normalized coordinates, anisotropy 4, bias 0.5, maximum clamp 2; then a surface.
write("options", "texture-array", decisions(
    12, 1, 1, 0,    # textures; the uint8 x 4 shape; surface load/store; the whole buffer
    0, 1, 0, 0,     # the descriptor's own struct_size; kind 1 + 0 (OPAQUE_ARRAY); no other kind's fields
    0,              # the options' own struct_size
    1, 1, 1, 0, 1, 3,  # address modes WRAP, CLAMP, BORDER
    1, 1, 1, 1,     # filter LINEAR, read NORMALIZED_FLOAT
    1, 1, 1, 0, 1, 0, 1, 0,  # normalized coordinates; no srgb, trilinear, seamless
    0, 4, 1, 0,     # anisotropy 4; mipmap filter POINT
    1, 66, 1, 64, 1, 72,  # bias 0.5, minimum clamp 0, maximum clamp 2
    1, 64, 1, 64, 1, 64, 1, 64,  # border color 0
    0, 1))          # device NULL; options given
# Over linear memory: float (the 16 x 16 shape), kind LINEAR, format FLOAT32 x 2, 1024 bytes.
# (A range above 255 takes two bytes, the high one first.)
write("options", "texture-linear", decisions(12, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0, 0, 1024 // 256, 1024 % 256))
# Region copies (selector 14): host memory (packed) into a float x 2 array, 5 x 3 elements at (2, 1).
write("options", "copy-host-to-array", decisions(
    14, 0, 0,       # copies; both arrays of the float x 2 shape
    0, 1,           # the copy's own struct_size; reserved0 0
    0, 2, 1,        # source: array first (not taken), host memory, packed
    0, 0, 0, 2, 0, 1, 0,  # destination: an array (the second), x 2, y 1, z 0
    0, 4, 0, 2, 0, 0,     # 1 + 4 by 1 + 2 by 1 + 0
    1, 1))          # the stream; the copy given
# A BC1 array (18 x 12: partial blocks) region of 8 x 4 texels at (4, 4) into a buffer, packed.
write("options", "copy-bc-to-buffer", decisions(14, 3, 3, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 7, 0, 3, 0, 0, 1, 1))
