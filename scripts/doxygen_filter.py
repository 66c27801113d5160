#!/usr/bin/env python3
"""Doxygen's INPUT_FILTER for libcucore's headers (scripts/docs.sh): prints FILE as Doxygen should read it.

The headers are documented with plain comments, as C headers are: a comment on its own lines documents the
declaration after it, a comment after code on the same line documents that member or enumerator, and the
first comment of a file describes the file. This turns them into Doxygen's forms (/** */, ///, /**< */,
///<, \\file) without changing a line number, and escapes in their text what Doxygen would otherwise read
as commands or HTML (\\ @ < > & # %), so the text reads as written. Comments inside function bodies and
separator comments (/* ---- Status ---- */) stay plain. Code is never changed.
Usage: doxygen_filter.py FILE
"""
import re
import sys

DECLARATION_SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b|extern\s*\"C\"")
# What ends a function's head before its body: ) with qualifiers, or a trailing return type.
BODY_END = re.compile(r"\)\s*(?:const|noexcept(?:\([^)]*\))?|override|final|&|&&|\s)*(?:->[^{]*)?\s*$")


def escape(text: str) -> str:
    text = text.replace("\\", "\\\\").replace("@", "\\@").replace("::", "\\::")
    for ch in "<>&#%":
        text = text.replace(ch, "\\" + ch)
    return text


def markdown(source: str) -> str:
    """A page of docs/: links to the repository's other files become their text and path (Doxygen would look
    for pages it does not have); URLs stay links."""
    def plain(m):
        text, target = m.group(1), m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            return m.group(0)
        return f"{text} (`docs/{target}`)" if not target.startswith("#") else text
    return re.sub(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)", plain, source)


def filtered(source: str) -> str:
    out = []
    i, n = 0, len(source)
    scopes = []            # True: a declaration scope ({ of namespace/class/struct/enum/extern "C"); False: a body
    since = []             # the code since the last ; { } (decides what a { opens)
    line_start = True      # only whitespace so far on this line
    line_has_code = False  # code before the current point on this line
    in_directive = False   # in a preprocessor line (braces there do not count)
    first_comment = True

    def at_declaration_level() -> bool:
        return all(scopes)

    while i < n:
        c = source[i]
        two = source[i:i + 2]
        if two == "/*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            body = source[i + 2:end - 2]
            trailing = line_has_code
            plain = (not at_declaration_level() or body.startswith(("*", "!"))
                     or re.match(r"\s*-{3,}", body) is not None or in_directive and not trailing)
            if first_comment and not trailing and not scopes:
                out.append("/** " + escape(body) + " \\file */")
            elif plain:
                out.append(source[i:end])
            elif trailing:
                out.append("/**< " + escape(body) + "*/")
            else:
                out.append("/** " + escape(body) + "*/")
            first_comment = False
            line_start = False
            i = end
            continue
        if two == "//":
            end = source.find("\n", i)
            end = n if end < 0 else end
            body = source[i + 2:end]
            trailing = line_has_code
            if (not at_declaration_level() or body.startswith(("/", "!")) or re.match(r"\s*-{3,}", body)
                    or in_directive):
                out.append(source[i:end])
            elif first_comment and not trailing and not scopes:
                out.append("/// " + escape(body.lstrip()) + " \\file")
            elif trailing:
                out.append("///<" + escape(body))
            else:
                out.append("///" + escape(body))
            first_comment = False
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and source[j] != c:
                j += 2 if source[j] == "\\" else 1
            out.append(source[i:j + 1])
            i = j + 1
            line_start = False
            line_has_code = True
            continue
        if c == "\n":
            if in_directive and not (out and "".join(out[-1:]).endswith("\\")):
                in_directive = False
            line_start, line_has_code = True, False
            out.append(c)
            i += 1
            continue
        if c == "#" and line_start:
            in_directive = True
        if not c.isspace():
            line_start = False
            line_has_code = True
        if not in_directive:
            if c == "{":
                code = "".join(since)
                scopes.append(DECLARATION_SCOPE.search(code) is not None and "=" not in code
                              and BODY_END.search(code) is None)
                since = []
            elif c == "}":
                if scopes:
                    scopes.pop()
                since = []
            elif c == ";":
                since = []
            else:
                since.append(c)
        out.append(c)
        i += 1
    return "".join(out)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(markdown(text) if sys.argv[1].endswith(".md") else filtered(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
