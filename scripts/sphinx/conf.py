"""Sphinx configuration of the Python API reference (scripts/docs.sh writes the pages and runs Sphinx with -c here)."""
import inspect
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(os.environ.get("CUCORE_ROOT", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "bindings" / "python"))

project = "cucore (Python)"
release = version = os.environ.get("CUCORE_VERSION", "")
extensions = ["sphinx.ext.autodoc"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
html_theme = "alabaster"

# The package's docstrings are plain text, as the package and the C headers are written, not reStructuredText:
# each is shown as written, as a line block (every line and its indentation kept), with `code` as code and
# nothing else read as markup.
_SPECIAL = re.compile(r"([\\*`|_\[\]<>:])")


def _plain(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


def _line(line: str) -> str:
    body = line.lstrip(" ")
    indent = "\u00a0" * (len(line) - len(body))
    parts = body.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code on this line
        return indent + _plain(body)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(_plain(part))
        elif part.strip():
            out.append("\\ ``" + part + "``\\ ")
    return indent + "".join(out)


def _as_written(app, what, name, obj, options, lines):
    text = inspect.cleandoc("\n".join(lines))
    if not text.strip():
        lines[:] = []
        return
    lines[:] = [("| " + _line(line)) if line.strip() else "|" for line in text.splitlines()] + [""]


def setup(app):
    app.connect("autodoc-process-docstring", _as_written)
