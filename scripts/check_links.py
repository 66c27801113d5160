#!/usr/bin/env python3
"""Checks that the documentation points at files that exist in this repository.

Usage: check_links.py [REPO_ROOT] [PATH ...]   (default paths: README.md docs include bench/README.md)

For every Markdown file and C/C++ header under PATH:
  - every Markdown link and image, [text](target) and ![alt](target), that is not a URL: the target
    (relative to the file, as Markdown resolves it) must exist in the repository, and a #fragment
    into a Markdown file must name one of its headings (GitHub's anchors);
  - every file reference in the text, such as `docs/testing.md` or scripts/fuzz.sh, a path with a
    directory and a known extension: it must exist relative to the repository root or to the file.
    A reference is found relative to the root, to the file, to include/ or src/ (as #include and
    the docs' `core/...` name them), or as the tail of a tracked file's path (`cucore-sys/src/lib.rs`).
    Not checked: paths with placeholders (<capability>, *, {a,b}, and `foo`, the example noun of
    docs/adding_a_capability.md), #include-style <dir/file.h> names of other projects' headers, and
    build outputs (build/, .device/, LOGDIR/).
A reference that leaves the repository (../shared/..., /work/...; system paths such as /usr/... are
not references into it) is an error too: a reader of the
repository cannot follow it. Prints each problem as FILE:LINE: message; exit 1 if there is any.
"""
import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTENSIONS = "md|h|hpp|c|cpp|cc|py|sh|rs|toml|cmake|txt|json|png|jpg|in|map|cfg|ini|yml|yaml"
FILE_REF = re.compile(r"(?<![\w./:-])((?:\.\./|/)?(?:[\w.-]+/)+[\w.-]+\.(?:" + EXTENSIONS + r"))(?![\w/-])")
PLACEHOLDER = re.compile(r"[<>*{}$]")
EXAMPLE_NOUN = re.compile(r"(?:^|[/_])foo(?:[._/]|$)")
GENERATED_PREFIXES = ("build/", ".device/", "LOGDIR/", "/tmp/", "target/", "OUT/")
# Absolute paths of the system a reader has (the driver's files, an install prefix) are not the repository's.
SYSTEM_PREFIXES = ("/usr/", "/etc/", "/opt/", "/lib/", "/lib64/", "/dev/", "/proc/", "/sys/", "/var/")
URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> set:
    found, counts = set(), {}
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def main() -> int:
    args = sys.argv[1:]
    root = pathlib.Path(args.pop(0) if args else pathlib.Path(__file__).resolve().parents[1]).resolve()
    paths = args or ["README.md", "docs", "include", "bench/README.md"]
    files = []
    for p in paths:
        full = root / p
        if full.is_dir():
            files += sorted(f for f in full.rglob("*") if f.suffix in (".md", ".h", ".hpp") and f.is_file())
        elif full.is_file():
            files.append(full)
        else:
            print(f"check_links: {p} does not exist")
            return 1
    problems = []
    anchor_cache = {}
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        tracked = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    tracked_set = set(tracked)

    def exists(ref: str, f: pathlib.Path) -> bool:
        if ref.startswith("../") or ref.startswith("/"):
            return False
        if any((base / ref).exists() for base in (root, f.parent, root / "include", root / "src")):
            return True
        return ref in tracked_set or any(t.endswith("/" + ref) for t in tracked)

    def inside(target: pathlib.Path) -> bool:
        try:
            target.resolve().relative_to(root)
            return True
        except ValueError:
            return False

    for f in files:
        rel = f.relative_to(root)
        is_md = f.suffix == ".md"
        for number, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{rel}:{number}"
            link_spans = []
            if is_md:
                for m in LINK.finditer(line):
                    link_spans.append(m.span())
                    target = m.group(1)
                    if URL.match(target):
                        continue
                    path_part, _, fragment = target.partition("#")
                    dest = f if not path_part else (f.parent / path_part)
                    if not inside(dest):
                        problems.append(f"{where}: link {target} leaves the repository")
                        continue
                    if not dest.exists():
                        problems.append(f"{where}: link {target}: {dest.resolve().relative_to(root)} does not exist")
                        continue
                    if fragment and dest.suffix == ".md":
                        if dest not in anchor_cache:
                            anchor_cache[dest] = anchors(dest)
                        if fragment not in anchor_cache[dest]:
                            problems.append(f"{where}: link {target}: no heading #{fragment} in "
                                            f"{dest.relative_to(root)}")
            for m in FILE_REF.finditer(line):
                if any(a <= m.start() < b for a, b in link_spans):
                    continue
                ref = m.group(1).rstrip(".")
                if PLACEHOLDER.search(ref) or EXAMPLE_NOUN.search(ref):
                    continue
                before, after = line[:m.start()], line[m.end():]
                if before.endswith("<") and after.startswith(">") and not exists(ref, f):
                    continue  # <dlpack/dlpack.h>: another project's header, by its include name
                if ref.startswith(GENERATED_PREFIXES + SYSTEM_PREFIXES) or "/build/" in ref:
                    continue
                if exists(ref, f):
                    continue
                if ref.startswith("/") or ref.startswith("../"):
                    problems.append(f"{where}: {ref} is outside the repository")
                else:
                    problems.append(f"{where}: {ref} does not exist in the repository")
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
