#!/usr/bin/env python3
"""How many Rust `fn` items the graph finds, against an independent count.

usage: scripts/coverage-rust.py [--rpg PATH] DIR [DIR ...]

For each directory (a crate, e.g. from ~/.cargo/registry/src/*/tokio-1.54.1)
the *.rs files are copied into a scratch git repository and indexed with
`rpg init --json`; the graph's functions and methods are compared with a
count by a small lexer written here, which shares no code with rpg:

  - `fn NAME` tokens are counted, outside comments (nested block comments
    too), string, byte-string, raw-string and char literals;
  - `macro_rules!` bodies are skipped: their `fn`s are templates;
  - `extern { ... }` blocks are skipped: foreign declarations, not items;
  - `fn(` (a function-pointer type) is not an item.

Everything else counts: methods, trait methods with or without a body,
nested fns, and fns inside macro invocations such as `cfg_rt! { ... }`.
Prints one line per directory and the ratio found/counted.
"""

import os
import shutil
import sys

import rpg_scratch


def skip_string(src, i):
    """Index after the string literal starting at src[i] (a quote)."""
    i += 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return i


def skip_raw_string(src, i):
    """src[i] is 'r' of r#"..."# (or br); index after the literal."""
    j = i + 1
    hashes = 0
    while j < len(src) and src[j] == "#":
        hashes += 1
        j += 1
    if j >= len(src) or src[j] != '"':
        return None
    end = '"' + "#" * hashes
    k = src.find(end, j + 1)
    return len(src) if k < 0 else k + len(end)


def skip_block_comment(src, i):
    depth = 0
    while i < len(src):
        if src.startswith("/*", i):
            depth += 1
            i += 2
        elif src.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return i


def skip_balanced(src, i):
    """src[i] is an opening delimiter; index after its match, lexing inside."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[src[i]]]
    i += 1
    while i < len(src) and stack:
        i, tok = next_token(src, i)
        if tok in pairs:
            stack.append(pairs[tok])
        elif stack and tok == stack[-1]:
            stack.pop()
    return i


def is_ident_char(c):
    return c.isalnum() or c == "_"


def next_token(src, i):
    """(index after the token, the token), skipping trivia and literals."""
    n = len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
            k = src.find("\n", i)
            i = n if k < 0 else k + 1
        elif src.startswith("/*", i):
            i = skip_block_comment(src, i)
        else:
            break
    if i >= n:
        return n, ""
    c = src[i]
    if c == '"':
        return skip_string(src, i), "<str>"
    if c in "rb" and (src.startswith('r"', i) or src.startswith("r#", i)):
        end = skip_raw_string(src, i)
        if end is not None:
            return end, "<str>"
    if src.startswith('b"', i):
        return skip_string(src, i + 1), "<str>"
    if src.startswith("br", i):
        end = skip_raw_string(src, i + 1)
        if end is not None:
            return end, "<str>"
    if c == "'":
        # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
        if i + 2 < n and src[i + 1] == "\\":
            k = src.find("'", i + 2)
            return (n if k < 0 else k + 1), "<char>"
        if i + 2 < n and src[i + 2] == "'":
            return i + 3, "<char>"
        j = i + 1
        while j < n and is_ident_char(src[j]):
            j += 1
        return j, "<lifetime>"
    if is_ident_char(c):
        j = i
        while j < n and is_ident_char(src[j]):
            j += 1
        return j, src[i:j]
    return i + 1, c


def count_fns(src):
    count = 0
    i = 0
    prev = ""
    while True:
        i, tok = next_token(src, i)
        if not tok:
            return count
        if tok == "macro_rules":
            # macro_rules! name { ... } : skip the whole definition.
            i, bang = next_token(src, i)
            i, _name = next_token(src, i)
            j, opener = next_token(src, i)
            if opener in "([{" and opener:
                i = skip_balanced(src, j - 1)
            continue
        if tok == "extern":
            j, nxt = next_token(src, i)
            if nxt == "<str>":
                j, nxt = next_token(src, j)
            if nxt == "{":
                i = skip_balanced(src, j - 1)
                continue
        if tok == "fn" and prev not in ("&",):
            j, name = next_token(src, i)
            if name and (name[0].isalpha() or name[0] == "_") and name not in ("<lifetime>",):
                count += 1
        prev = tok


def independent_count(root):
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("target", ".git")]
        for f in filenames:
            if f.endswith(".rs"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    total += count_fns(fh.read())
    return total


def graph_count(rpg, root):
    pairs = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("target", ".git")]
        for f in filenames:
            if f.endswith(".rs") or f == "Cargo.toml":
                src = os.path.join(dirpath, f)
                pairs.append((src, os.path.relpath(src, root)))
    scratch, report = rpg_scratch.index_copies(rpg, pairs)
    shutil.rmtree(scratch, ignore_errors=True)
    c = report["counts"]
    return c["functions"] + c["methods"]


def main(argv):
    rpg = "target/release/rpg"
    if len(argv) > 2 and argv[1] == "--rpg":
        rpg = argv[2]
        argv = argv[:1] + argv[3:]
    rpg = os.path.abspath(rpg)
    if len(argv) < 2:
        sys.exit(__doc__)
    print(f"{'directory':<40} {'counted':>8} {'found':>8} {'ratio':>7}")
    total_want = total_got = 0
    for root in argv[1:]:
        want = independent_count(root)
        got = graph_count(rpg, root)
        total_want += want
        total_got += got
        name = os.path.basename(os.path.normpath(root))
        print(f"{name:<40} {want:>8} {got:>8} {got / max(want, 1):>7.3f}")
    if len(argv) > 2:
        print(f"{'all':<40} {total_want:>8} {total_got:>8} {total_got / max(total_want, 1):>7.3f}")


if __name__ == "__main__":
    main(sys.argv)
