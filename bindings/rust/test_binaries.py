#!/usr/bin/env python3
"""Build the Rust binding's test binaries and print their paths, one a line (or copy them).

Usage (from anywhere):
    python3 bindings/rust/test_binaries.py                 # build (cargo test --no-run), print paths
    python3 bindings/rust/test_binaries.py --copy DIR      # ... and copy them to DIR together with
                                                           # libcucore.so.0, for a machine without Rust
Extra cargo arguments go after `--`, e.g. `-- --release`. CUCORE_LIB_DIR and CARGO_TARGET_DIR are
honoured as by cargo itself.

The binaries carry the RUNPATH `<libcucore dir>:$ORIGIN`, so in DIR they find the copied
libcucore.so.0 beside them. Each is a libtest binary: run it with no arguments; GPU tests print
"skipped: ..." and pass where there is no driver or device; each binary then ends with how many
of its tests skipped and why ("skipped: N of the tests above ...").
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copy", metavar="DIR", help="copy the binaries and libcucore.so.0 to DIR")
    parser.add_argument("cargo_args", nargs="*", help="extra arguments for cargo (after --)")
    args = parser.parse_args()

    cmd = ["cargo", "test", "--offline", "--no-run", "--message-format=json",
           "--manifest-path", str(HERE / "Cargo.toml")] + args.cargo_args
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.stderr.write("test_binaries: cargo failed (%d)\n" % proc.returncode)
        return proc.returncode
    binaries = []
    lib_dir = None
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("profile", {}).get("test") and msg.get("executable"):
            binaries.append(msg["executable"])
        if msg.get("reason") == "build-script-executed" and "cucore-sys" in msg.get("package_id", ""):
            for path in msg.get("linked_paths", []):
                lib_dir = path.split("=", 1)[-1]
    for b in binaries:
        print(b)
    if args.copy:
        out = pathlib.Path(args.copy)
        out.mkdir(parents=True, exist_ok=True)
        for b in binaries:
            shutil.copy2(b, out / os.path.basename(b))
        if lib_dir is None:
            sys.stderr.write("test_binaries: could not tell where libcucore is\n")
            return 1
        lib = pathlib.Path(lib_dir) / "libcucore.so.0"
        shutil.copy2(lib.resolve(), out / "libcucore.so.0")
        sys.stderr.write("test_binaries: copied %d binaries and %s to %s\n" % (len(binaries), lib, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
