#!/usr/bin/env python3
"""Lists the functions of src/core and src/vk (or the files given) longer than a limit.

Issue 17's rule: no function in src/core or src/vk longer than 150 lines, counted from the
line of `fn` to the line of its closing brace. Exits 1 if any is longer.

    python3 tools/fn_lengths.py [--limit N] [FILE_OR_DIR ...]
"""
import argparse
import pathlib
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+(\w+)")


def code_only(text):
    """The text with comments, strings and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not text[i - 1:i].isalnum():
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x..'", text[i:i + 12]):
            m = re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x..'", text[i:i + 12])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, length in lines) of each function with a body in `path`."""
    lines = code_only(path.read_text()).split("\n")
    for start, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for k in range(start, len(lines)):
            for ch in lines[k]:
                if ch == ";" and not opened and depth == 0:
                    break  # a declaration without a body
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
                    if opened and depth == 0:
                        yield m.group(5), start + 1, k - start + 1
                        break
            else:
                continue
            break


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("paths", nargs="*", default=["src/core", "src/vk"])
    args = ap.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(p.rglob("*.rs")) if p.is_dir() else [p]
    long = [(f, *fn) for f in files for fn in functions(f) if fn[2] > args.limit]
    for f, name, line, n in long:
        print(f"{f}:{line}: fn {name} is {n} lines (limit {args.limit})")
    print(f"fn_lengths: {len(files)} files, {len(long)} functions over {args.limit} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
