#!/usr/bin/env python3
"""The README's complete C and C++ programs, built and run by CTest (tests/CMakeLists.txt).

  readme_examples.py extract README.md OUTDIR   writes each ```c / ```cpp block that has a main() as
                                                 OUTDIR/readme_<language>_<n>.{c,cpp} and prints their names
  readme_examples.py run PROGRAM                runs PROGRAM with no CUDA driver (CUCORE_CUDA_DRIVER_PATH at a
                                                 path that does not exist), where every call fails: the program
                                                 must print the library's message to stderr and exit with 1 --
                                                 a complete example reports failure through its exit status.
"""
import os
import pathlib
import re
import subprocess
import sys

BLOCK = re.compile(r"^```(c|cpp)\n(.*?)^```", re.S | re.M)


def extract(readme: str, outdir: str) -> int:
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    text = pathlib.Path(readme).read_text(encoding="utf-8")
    written = []
    counts = {"c": 0, "cpp": 0}
    for m in BLOCK.finditer(text):
        lang, code = m.group(1), m.group(2)
        if not re.search(r"^int main\(", code, re.M):
            continue
        counts[lang] += 1
        name = f"readme_{lang}_{counts[lang]}"
        path = out / f"{name}.{lang}"
        line = text.count("\n", 0, m.start(2)) + 1
        content = f'#line {line} "README.md"\n{code}'
        if not path.exists() or path.read_text() != content:
            path.write_text(content)
        written.append(name)
    for stale in out.glob("readme_*.*"):
        if stale.stem not in written:
            stale.unlink()
    print(";".join(written))
    return 0


def run(program: str) -> int:
    env = dict(os.environ, CUCORE_CUDA_DRIVER_PATH="/nonexistent/cucore-readme-example/libcuda.so.1")
    result = subprocess.run([program], env=env, capture_output=True, text=True, timeout=60)
    name = pathlib.Path(program).name
    if result.returncode != 1 or not result.stderr.strip():
        print(f"{name}: without a driver it exited {result.returncode} with stderr {result.stderr!r} "
              f"(stdout {result.stdout!r}); a complete example must report the failure and exit with 1")
        return 1
    print(f"{name}: without a driver it says {result.stderr.strip()!r} and exits 1")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "extract":
        sys.exit(extract(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2]))
    print(__doc__)
    sys.exit(2)
