#!/usr/bin/env python3
"""Lists the product's functions longer than a limit (collect/ drg/ overheads/ report/).

The limit is 120 lines, 80 in report/ (the command's layers: formatting code that grows a
paragraph at a time; docs/architecture.md).

A function over the limit needs its reason in the comment just above it, in a line starting
"Long:" ("// Long: one switch over every OMPT event, ..."). Exit status 1 when one lacks it.
Usage: scripts/long_functions.py [--limit N] [--all] [ROOT]   (ROOT: the checkout, by default this one)
The parser matches braces after removing comments, strings and character literals: a brace that
opens at namespace, extern "C" or class level after a ")" (a parameter list, then maybe const,
noexcept, an initializer list, a trailing return type) opens a function.
"""
import argparse
import os
import re
import sys

PRODUCT = ("collect", "drg", "overheads", "report")
# The limit of a folder when it is not the default's.
LIMITS = {"report": 80}
SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")


def blank_code(text):
    """The text with comments, strings and character literals replaced by spaces (newlines kept),
    and the comment lines, by line number, for finding reasons."""
    out, comments, i, n = [], {}, 0, len(text)
    line = 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments[line] = text[i + 2:end].strip()
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            chunk = text[i:end]
            for k, part in enumerate(chunk.split("\n")):
                comments[line + k] = part.strip(" /*")
            line += chunk.count("\n")
            out.append(re.sub(r"[^\n]", " ", chunk))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end + len(delim) + 2
            chunk = text[i:end]
            line += chunk.count("\n")
            out.append(re.sub(r"[^\n]", " ", chunk))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            if c == "\n":
                line += 1
            out.append(c)
            i += 1
    return "".join(out), comments


SCOPE = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace\b|extern\s*$|(class|struct|union|enum)\b)")


def without_directives(code):
    """Preprocessor lines (and their continuations) blanked."""
    lines, directive = code.split("\n"), False
    for i, text in enumerate(lines):
        if directive or text.lstrip().startswith("#"):
            directive = text.rstrip().endswith("\\")
            lines[i] = ""
    return "\n".join(lines)


def functions(path):
    """(signature, first line, last line, reason) of each function definition in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code, comments = blank_code(f.read())
    code = without_directives(code)
    found, stack = [], []  # stack of "scope" (namespace, class, extern "C") or "block"
    statement, start_line, line = "", None, 1
    for c in code:
        if c == "\n":
            line += 1
        if c == "{":
            text = " ".join(statement.split())
            in_scope = all(s == "scope" for s in stack)
            if in_scope and SCOPE.match(text) and not text.rstrip().endswith(")"):
                stack.append("scope")
            elif in_scope and ")" in text and "(" in text:
                stack.append(("fn", start_line or line, text))
            else:
                stack.append("block")
            statement, start_line = "", None
        elif c == "}":
            top = stack.pop() if stack else "block"
            if isinstance(top, tuple):
                found.append((top[2], top[1], line))
            statement, start_line = "", None
        elif c == ";":
            statement, start_line = "", None
        else:
            if start_line is None and not c.isspace():
                start_line = line
            statement += c
    return [(name, first, last, reason(comments, first)) for name, first, last in found]


def reason(comments, first):
    """The "Long:" reason in the comment lines just above `first`, or None."""
    k = first - 1
    while k in comments:
        if comments[k].startswith("Long:"):
            return comments[k][5:].strip()
        k -= 1
    return None


def signature_name(text):
    m = re.search(r"([~\w:]+(?:operator\s*\S+)?)\s*\(", text)
    return m.group(1) if m else text[:60]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="one limit for every folder")
    ap.add_argument("--all", action="store_true", help="list every long function, with or without a reason")
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    a = ap.parse_args()
    missing = 0
    for top in PRODUCT:
        limit = a.limit if a.limit is not None else LIMITS.get(top, 120)
        for d, _, files in sorted(os.walk(os.path.join(a.root, top))):
            for name in sorted(files):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(d, name)
                for text, first, last, why in functions(path):
                    lines = last - first + 1
                    if lines <= limit or (why and not a.all):
                        continue
                    missing += why is None
                    rel = os.path.relpath(path, a.root)
                    print(f"{rel}:{first}: {signature_name(text)}: {lines} lines: {why or 'no reason given'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
