#!/usr/bin/env python3
"""How many C and C++ function definitions the graph finds, against an
independent brace-matching scanner.

usage: scripts/coverage-c.py [--rpg PATH] [--list N] DIR

Every C and C++ file under DIR (`.c .h .cpp .cc .cxx .c++ .hpp .hh .hxx
.h++ .ipp .inl .tpp`; `.git` left out) is copied into a scratch git
repository and indexed with `rpg init`. The scanner below knows nothing
of tree-sitter: it drops comments, literals and directive lines, follows
braces through namespaces, classes and `extern "C"` blocks, and counts a
definition wherever a statement at such a scope is `name(…) … {`, with
`template <…>` prefixes, qualified and operator names, trailing
specifiers and constructor initialiser lists allowed. Names in capitals
(`TEST_CASE("…") {`) are macro invocations, not definitions, and count
for neither side. Every `#if` branch is read, as rpg reads them: each
`#elif`/`#else` restarts from the scopes the `#if` opened with, and the
last branch's scopes carry on.

A definition counts as found when the graph has a function or method in
that file with the same last name segment whose span holds the line of
the name. Prints the totals, the files that differ most, and with
`--list N` up to N missed definitions.
"""

import os
import re
import shutil
import sys

import rpg_scratch

EXTS = (".c", ".h", ".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl", ".tpp")
NOT_NAMES = {
    "if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype", "alignas",
    "__attribute__", "__declspec", "noexcept", "requires", "static_assert", "typeid", "throw",
    "new", "delete", "defined", "__asm__", "asm", "_Pragma", "__pragma", "_Static_assert",
}
OPENERS = ("class", "struct", "union")
TOKEN = re.compile(r"[A-Za-z_]\w*|::|->|\S")


def clean(src):
    """Comments and string or character literals become spaces, newlines
    kept; directive lines are kept apart as (line, directive) pairs."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'":
            m = re.match(r'R"([^(\s]*)\(', src[i - 1:i + 20]) if i and src[i - 1] == "R" else None
            if m:
                end = src.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and src[j] != c and src[j] != "\n":
                    j += 2 if src[j] == "\\" else 1
                j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", src[i + 1:j - 1]) + (c if j - 1 > i else ""))
            i = j
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    lines, directives, cont = text.split("\n"), {}, False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            if not cont:
                directives[k] = line.lstrip()[1:].strip()
            cont = line.rstrip().endswith("\\")
            lines[k] = ""
    return lines, directives


def strip_template(head):
    while head and head[0][1] == "template":
        depth, k = 0, 1
        while k < len(head):
            t = head[k][1]
            depth += (t == "<") - (t == ">")
            k += 1
            if depth == 0 and t == ">":
                break
        head = head[k:]
    return head


def definition(head):
    """The (name, line) a statement head `… name(…) … ` defines, or None."""
    head = strip_template(head)
    if not head or head[0][1] in OPENERS + ("enum", "namespace", "extern", "typedef", "using"):
        return None
    depth = 0
    for k, (line, t) in enumerate(head):
        if t in "([":
            if depth == 0 and t == "(" and k:
                name = head[k - 1][1]
                if head[k - 1][1] == ")" and k > 2 and head[k - 3][1] == "operator":
                    continue  # `operator()(` : the parameters follow
                if k >= 2 and head[k - 2][1] == "operator" or name == "operator":
                    return "operator", head[k - 1][0]
                ops = [x for _, x in head[max(0, k - 4):k]]
                if "operator" in ops:
                    return "operator", head[k - 1][0]
                if re.fullmatch(r"[A-Za-z_]\w*", name) and name not in NOT_NAMES:
                    if name.isupper() and len(name) > 1:
                        # A macro's arguments (`JV_PRINTF_LIKE(1, 2) void f(…)`), or a
                        # macro invocation.
                        continue
                    if any(x == "=" for _, x in head[:k]):
                        return None
                    tilde = "~" if k >= 2 and head[k - 2][1] == "~" else ""
                    return tilde + name, head[k - 1][0]
            depth += 1
        elif t in ")]":
            depth -= 1
    return None


def scan(src):
    """(name, line) of every definition the scanner sees."""
    lines, directives = clean(src)
    found = []
    scopes = ["ns"]  # ns, class, other
    head = []
    saved = []  # per open #if: the scopes and head it started with
    init_list = False
    for k, line in enumerate(lines):
        d = directives.get(k, "")
        if d.startswith("if"):
            saved.append((list(scopes), list(head)))
        elif d.startswith("el") and saved:
            scopes, head = list(saved[-1][0]), list(saved[-1][1])
        elif d.startswith("endif") and saved:
            saved.pop()
        for t in TOKEN.findall(line):
            if scopes[-1] == "other":
                if t == "{":
                    scopes.append("other")
                elif t == "}":
                    scopes.pop()
                continue
            if t == "{":
                if init_list and head and head[-1][1] not in (")", "}") and re.fullmatch(r"\w+", head[-1][1]):
                    # `c{y}` inside a constructor's initialiser list
                    head.append((k, t))
                    scopes.append("init")
                    continue
                stripped = strip_template(head)
                kind = stripped[0][1] if stripped else ""
                if kind in ("namespace", "extern") or (kind in OPENERS and not any(x == "(" for _, x in stripped)):
                    scopes.append("ns")
                else:
                    d = definition(head)
                    if d:
                        found.append(d)
                    scopes.append("other")
                head, init_list = [], False
            elif t == "}":
                if scopes[-1] == "init":
                    scopes.pop()
                    head.append((k, t))
                    continue
                if len(scopes) > 1:
                    scopes.pop()
                head, init_list = [], False
            elif t == ";":
                if scopes[-1] == "init":
                    continue
                head, init_list = [], False
            elif t == ":" and head and head[-1][1] in (")", "const", "noexcept", "override", "final") or (
                t == ":" and head and head[-1][1].isupper() and definition(head)
            ):
                init_list = True
                head.append((k, t))
            elif scopes[-1] == "init":
                head.append((k, t))
            elif t in ("public", "private", "protected") and not head:
                pass
            elif t == ":" and not head:
                pass
            else:
                head.append((k, t))
    return [(n, l + 1) for n, l in found]


def main(argv):
    rpg, listed = "target/release/rpg", 0
    while len(argv) > 2 and argv[1] in ("--rpg", "--list"):
        if argv[1] == "--rpg":
            rpg = argv[2]
        else:
            listed = int(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) != 2:
        sys.exit(__doc__)
    rpg, root = os.path.abspath(rpg), argv[1]
    want, pairs = {}, []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            if not f.endswith(EXTS):
                continue
            src = os.path.join(dirpath, f)
            try:
                with open(src, "rb") as fh:
                    text = fh.read().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            rel = os.path.relpath(src, root)
            want[rel] = scan(text)
            pairs.append((src, rel))
    scratch, _ = rpg_scratch.index_copies(rpg, pairs)
    try:
        spans = {}
        graph = os.path.join(scratch, ".rpg", "graph.jsonl")
        indexed = set(rpg_scratch.snapshot_files(graph))
        for r in rpg_scratch.snapshot_entities(graph):
            if r["kind"] in ("function", "method"):
                last = re.split(r"::", r["qualname"].split("#")[0])[-1]
                last = "operator" if last.startswith("operator") else last
                spans.setdefault(r["path"], []).append((last, r["start_line"], r["end_line"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    skipped = sorted(set(want) - indexed)
    if skipped:
        print(f"{len(skipped)} files rpg skips (generated, binary…) left out: {', '.join(skipped[:5])}")
    missed, total, per_file = [], 0, []
    for path, defs in sorted(want.items()):
        if path not in indexed:
            continue
        got = spans.get(path, [])
        miss = [(n, l) for n, l in defs if not any(n == g and a <= l <= b for g, a, b in got)]
        total += len(defs)
        missed += [(path, n, l) for n, l in miss]
        graph = sum(1 for g in got if not g[0].isupper() or len(g[0]) == 1)
        per_file.append((len(miss), path, len(defs), graph))
    found = total - len(missed)
    print(f"{len(want) - len(skipped)} files: scanner {total} definitions, rpg finds {found}, ratio {found / max(total, 1):.4f}")
    for m, path, n, g in sorted(per_file, reverse=True)[:10]:
        if m:
            print(f"  {path}: scanner {n}, rpg misses {m} (rpg has {g} functions there)")
    for path, n, l in missed[:listed]:
        print(f"  missed {path}:{l} {n}")


if __name__ == "__main__":
    main(sys.argv)
