#!/usr/bin/env python3
"""How many Python functions and methods the graph finds, against `ast`.

usage: scripts/coverage-python.py [--rpg PATH] DIR

DIR (e.g. the standard library, `python3 -c 'import sysconfig;
print(sysconfig.get_paths()["stdlib"])'`) is copied into a scratch git
repository (its .py files only, site-packages left out) and indexed with
`rpg init`. For every file Python's own `ast` parses, the definitions it
finds (FunctionDef and AsyncFunctionDef, nested ones included) are
compared with the graph's functions and methods in that file.

Overloads are counted once: `@overload` stubs followed by their
implementation are one definition, as rpg folds them; stubs with no
implementation count one each. Prints the totals and the ten files that
differ most.
"""

import ast
import os
import shutil
import sys

import rpg_scratch


def is_overload(d):
    name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
    return name == "overload"


def count_defs(stmts):
    """Definitions in a statement list and everything under it, overload
    stubs folded into the implementation that follows them."""
    total = 0
    pending = {}  # name -> stubs still waiting for their implementation
    for s in stmts:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(is_overload(d) for d in s.decorator_list):
                pending[s.name] = pending.get(s.name, 0) + 1
            else:
                pending.pop(s.name, None)
                total += 1
            total += count_defs(s.body)
        elif isinstance(s, ast.ClassDef):
            total += count_defs(s.body)
        else:
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list):
                    total += count_defs(sub)
            for h in getattr(s, "handlers", []) or []:
                total += count_defs(h.body)
            for case in getattr(s, "cases", []) or []:
                total += count_defs(case.body)
    return total + sum(pending.values())


def main(argv):
    rpg = "target/release/rpg"
    if len(argv) > 2 and argv[1] == "--rpg":
        rpg = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) != 2:
        sys.exit(__doc__)
    rpg, root = os.path.abspath(rpg), argv[1]
    want, pairs = {}, []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("site-packages", "__pycache__")]
        for f in filenames:
            if not f.endswith(".py"):
                continue
            src = os.path.join(dirpath, f)
            try:
                with open(src, "rb") as fh:
                    data = fh.read()
                tree = ast.parse(data)
                data.decode("utf-8")
            except (SyntaxError, ValueError, UnicodeDecodeError):
                continue
            rel = os.path.relpath(src, root)
            want[rel] = count_defs(tree.body)
            pairs.append((src, rel))
    scratch, _ = rpg_scratch.index_copies(rpg, pairs)
    try:
        got = dict.fromkeys(want, 0)
        for r in rpg_scratch.snapshot_entities(os.path.join(scratch, ".rpg", "graph.jsonl")):
            if r["kind"] in ("function", "method") and r["path"] in got:
                got[r["path"]] += 1
        w, g = sum(want.values()), sum(got.values())
        print(f"{len(want)} files ast parses: ast {w} definitions, rpg {g}, ratio {g / max(w, 1):.4f}")
        worst = sorted(want, key=lambda p: -abs(want[p] - got[p]))[:10]
        for p in worst:
            if want[p] != got[p]:
                print(f"  {p}: ast {want[p]}, rpg {got[p]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv)
