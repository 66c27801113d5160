#!/usr/bin/env python3
"""ABI checks of libcucore (run by CTest; no GPU needed).

1. The shared library exports exactly the functions the public headers declare
   (nothing more: no C++ internals; nothing less: no missing definition).
2. Every public function is exercised by the unit tests (named in tests/unit),
   so a new function cannot slip in without argument and handle checks.
3. No CUDA library (libcuda, NVRTC, nvJitLink, the runtime) is NEEDED: they are
   loaded at run time, so libcucore loads on a machine without them.
4. The soname is libcucore.so.<major>.
5. The naming grammar cucore_<noun>_<verb> is unambiguous: a noun that has a
   constructor (cucore_<noun>_create..., cucore_<noun>_get_default) is not also
   the name of a function (cucore_<noun>), which would read as a getter.

Usage: check_abi.py LIBRARY [REPO_ROOT]
"""
import pathlib
import re
import subprocess
import sys


def header_functions(include_dir: pathlib.Path) -> set:
    names = set()
    for header in sorted(include_dir.glob("cucore/*.h")):
        text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
        names.update(re.findall(r"CUCORE_API\s+[^;]*?\b(cucore_\w+)\s*\(", text))
    return names


CONSTRUCTOR_VERB = re.compile(r"_(create\w*|get_default)$")


def grammar_problems(names: set) -> list:
    """Functions whose name is also the noun of a constructor (cucore_x and cucore_x_create)."""
    problems = []
    for name in sorted(names):
        m = CONSTRUCTOR_VERB.search(name)
        if m and name[:m.start()] in names:
            problems.append(f"naming grammar: {name[:m.start()]} is a function and the noun of {name}; "
                            f"name the function as a verb of its own noun (e.g. cucore_<noun>_get_<what>)")
    return problems


def exported_functions(library: str) -> set:
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWwDdBbRr" and not parts[2].startswith("CUCORE_"):
            symbols.add(parts[2].split("@")[0])
    return symbols


def main() -> int:
    library = sys.argv[1]
    root = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else pathlib.Path(__file__).resolve().parent.parent)
    declared = header_functions(root / "include")
    exported = exported_functions(library)
    problems = []
    for name in sorted(declared - exported):
        problems.append(f"declared in a header but not exported: {name}")
    for name in sorted(exported - declared):
        problems.append(f"exported but not declared in a public header: {name}")
    dynamic = subprocess.run(["readelf", "-d", library], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    for lib in needed:
        if re.match(r"lib(cuda|nvrtc|nvJitLink|cudart|nvvm)", lib):
            problems.append(f"links a CUDA library at load time (NEEDED {lib}); it must be loaded at run time")
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[(.+?)\]", dynamic)
    header = (root / "include/cucore/common.h").read_text()
    major = re.search(r"#define CUCORE_VERSION_MAJOR (\d+)", header).group(1)
    if soname != [f"libcucore.so.{major}"]:
        problems.append(f"soname is {soname}, expected libcucore.so.{major}")
    problems += grammar_problems(declared)
    unit_sources = "".join(p.read_text() for p in (root / "tests/unit").glob("*.cpp"))
    for name in sorted(declared):
        if not re.search(r"\b" + name + r"\b", unit_sources):
            problems.append(f"not exercised by any unit test in tests/unit: {name}")
    if problems:
        print("ABI check failed:")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"ABI check passed: {len(declared)} functions declared, exported and unit-tested; "
          f"NEEDED {', '.join(needed)}; soname {soname[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
