#!/usr/bin/env python3
"""Checks the include structure of the C++ façade (include/cucore/*.hpp).

Each header includes what it needs at its top, before any declaration, and the
headers include each other in one direction only: the graph of their includes
of one another has no cycle. include/cucore.hpp includes every hand-written
header (the generated ones come through the headers that need them) in an order
where each follows every header it includes, the order docs/architecture.md
gives. (That each header compiles on its own is checked by the
facade_header_* build targets of tests/unit/CMakeLists.txt.)

Usage: check_headers.py [REPOSITORY]   (default: the repository holding this script)
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
# Lines that may come before the first declaration: comments, preprocessor lines, blank lines.
PREAMBLE = re.compile(r'^\s*(#|//|$)')


def main():
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    headers = sorted((root / "include" / "cucore").glob("*.hpp"))
    if not headers:
        print(f"check_headers: no headers under {root / 'include' / 'cucore'}")
        return 1
    names = {h.name for h in headers}
    graph = {}
    problems = []
    for header in headers:
        lines = header.read_text().splitlines()
        code_started = False
        graph[header.name] = []
        for number, line in enumerate(lines, 1):
            match = INCLUDE.match(line)
            if match:
                if code_started:
                    problems.append(f"{header.name}:{number}: #include \"{match.group(1)}\" after the first "
                                    "declaration: include what the header needs at its top")
                target = pathlib.PurePosixPath(match.group(1)).name
                if target in names and target != header.name:
                    graph[header.name].append(target)
            elif not PREAMBLE.match(line):
                code_started = True

    # One direction only: a depth-first search for a cycle.
    state = {}

    def visit(name, path):
        state[name] = "open"
        for target in graph[name]:
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif target not in state:
                visit(target, path + [target])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [name])

    # cucore.hpp: every hand-written header, each after the headers it includes.
    umbrella = root / "include" / "cucore.hpp"
    if not umbrella.exists():
        problems.append(f"{umbrella} is missing")
    else:
        listed = []
        for line in umbrella.read_text().splitlines():
            match = INCLUDE.match(line)
            if match and match.group(1).startswith("cucore/") and match.group(1).endswith(".hpp"):
                listed.append(pathlib.PurePosixPath(match.group(1)).name)
        generated = {h.name for h in headers if "GENERATED" in "\n".join(h.read_text().splitlines()[:3])}
        for name in sorted(names - generated - set(listed)):
            problems.append(f"cucore.hpp does not include cucore/{name}")
        position = {name: i for i, name in reversed(list(enumerate(listed)))}
        for name in listed:
            if name not in names:
                problems.append(f"cucore.hpp includes cucore/{name}, which does not exist")
                continue
            for target in graph[name]:
                if target in position and position[target] > position[name]:
                    problems.append(f"cucore.hpp includes cucore/{name} before cucore/{target}, which it includes: "
                                    "list the headers in their include order (docs/architecture.md)")

    for problem in problems:
        print(problem)
    if not problems:
        print(f"check_headers: {len(headers)} headers include what they need at the top, with no cycle, "
              "and cucore.hpp lists them in that order")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
