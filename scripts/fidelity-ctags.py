#!/usr/bin/env python3
"""How many definitions the graph finds in one language, against
universal-ctags, which shares no code with rpg's parsers.

usage: scripts/fidelity-ctags.py [--rpg PATH] [--list N] LANG REPO

LANG is one of csharp, php, ruby, kotlin, swift, scala, bash. Every file
of that language at REPO's HEAD (read from git, so a clone without a
checkout will do) is copied into a scratch repository and indexed with
`rpg init`, nothing excluded; ctags reads the same copies
(`ctags --output-format=json --fields=+nKe`).

Only the kinds both sides count are compared (below, per language): a
ctags tag counts as found when the graph has a class-like entity (for
type kinds) or a function or method (for callable kinds) in that file
with the same last name segment whose span holds the tag's line. Prints,
per kind, what ctags found and the share rpg found, then the other way
round (rpg's entities ctags lacks), and with `--list N` up to N misses.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict

import rpg_scratch

# Per language: its file endings, ctags's language name, and the ctags
# kinds compared, each as "type" or "callable".
LANGS = {
    "csharp": ((".cs",), "C#", {
        "class": "type", "struct": "type", "interface": "type", "enum": "type",
        "namespace": "type", "record": "type",
        "method": "callable", "property": "callable", "local": None,
    }),
    "php": ((".php",), "PHP", {
        "class": "type", "interface": "type", "trait": "type", "enum": "type",
        "function": "callable",
    }),
    "ruby": ((".rb", ".rake"), "Ruby", {
        "class": "type", "module": "type",
        "method": "callable", "singletonMethod": "callable",
    }),
    "kotlin": ((".kt", ".kts"), "Kotlin", {
        "class": "type", "interface": "type", "object": "type",
        "method": "callable",
    }),
    # ctags here reads neither Swift nor Scala: the keyword scanner below
    # stands in, as independent of tree-sitter as ctags is.
    "swift": ((".swift",), None, {
        "class": "type", "struct": "type", "enum": "type", "protocol": "type",
        "extension": "type", "actor": "type", "func": "callable", "init": "callable",
    }),
    "scala": ((".scala", ".sc"), None, {
        "class": "type", "object": "type", "trait": "type", "enum": "type",
        "def": "callable", "implicit val": "either",
    }),
    "bash": ((".sh", ".bash", ".zsh", ".ksh"), "Sh", {"function": "callable"}),
}


def checkout(repo, exts):
    """The repository's HEAD files with these endings, as (blob, path)."""
    out = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=repo, check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode != "120000" and path.endswith(exts):
            yield blob, path


KEYWORD = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|protected|internal|open|fileprivate|final|override|static|class(?=\s+(?:func|var))|"
    r"mutating|nonmutating|convenience|required|dynamic|indirect|lazy|implicit|inline|abstract|sealed|"
    r"case(?=\s+(?:class|object))|transparent|opaque|infix|prefix|postfix|@objc|nonisolated|"
    r"private\[\w+\]|protected\[\w+\])\s+)*"
    r"(class|struct|enum|protocol|extension|actor|func|init|object|trait|def)\b\s*([A-Za-z_`][\w.`]*)?")


# Scala 2's instances (its givens): a type when made by `new T { … }`,
# otherwise a function, so either side of the graph may hold one.
IMPLICIT_VAL = re.compile(
    r"^\s*(?:(?:private|protected|final|override|lazy|private\[\w+\]|protected\[\w+\])\s+)*"
    r"implicit\s+(?:(?:final|lazy|override|private|protected)\s+)*val\s+(`?\w+`?)\s*[:=]")


def strip_comments(text):
    """Comments and string literals blanked, lines kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def keyword_scan(path, rel):
    """Definitions by keyword at the start of a line, as ctags tags."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = strip_comments(fh.read()).split("\n")
    for k, line in enumerate(lines):
        v = IMPLICIT_VAL.match(line)
        if v:
            yield {"kind": "implicit val", "name": v.group(1).strip("`"), "line": k + 1,
                   "path": rel}
            continue
        m = KEYWORD.match(line)
        if not m:
            continue
        kind, name = m.group(1), m.group(2)
        if kind == "init":
            name = "init"
        if not name:
            continue
        name = name.strip("`").split(".")[-1] if kind != "extension" else name.strip("`").split(".")[-1]
        yield {"kind": kind, "name": name, "line": k + 1, "path": rel}


IDENT = re.compile(r"[A-Za-z_]\w*[?!=]?")
CODE = re.compile(r"=>|\b(?:get|set|init)\s*\{")


def counted(lang, tag, stage):
    """Whether a tag is one both sides count: a name (ctags's Kotlin
    parser tags lambdas as `<lambda>` and backticked test names as
    noise), and for C# a property with code, as rpg reads only those
    (`{ get; set; }` has none)."""
    name = tag["name"].rsplit(".", 1)[-1]
    if not IDENT.fullmatch(name):
        return False
    with open(os.path.join(stage, tag["path"]), encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    here = lines[tag["line"] - 1] if tag["line"] <= len(lines) else ""
    if lang == "csharp" and tag["kind"] == "property":
        text = "\n".join(lines[tag["line"] - 1:tag.get("end", tag["line"])])
        return bool(CODE.search(text))
    if lang == "csharp" and tag["kind"] == "method":
        # A primary constructor (`record R(int A)`, `class C(int x)`) is
        # tagged as a method on the type's own line; rpg has the type.
        return not re.search(r"\b(?:class|struct|record)\s+" + re.escape(name) + r"\b", here)
    if lang == "kotlin" and tag["kind"] == "method":
        # ctags's Kotlin parser also tags lambda parameters as methods.
        return "fun " in here or "fun`" in here
    return True


def main(argv):
    rpg, listed = os.path.abspath("target/release/rpg"), 0
    while len(argv) > 3 and argv[1] in ("--rpg", "--list"):
        if argv[1] == "--rpg":
            rpg = os.path.abspath(argv[2])
        else:
            listed = int(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) != 3 or argv[1] not in LANGS:
        sys.exit(__doc__)
    lang, repo = argv[1], argv[2]
    exts, ctags_lang, kinds = LANGS[lang]
    stage = rpg_scratch.tempfile.mkdtemp(prefix="rpg-fidelity-")
    pairs = []
    for blob, path in checkout(repo, exts):
        data = subprocess.run(["git", "cat-file", "blob", blob], cwd=repo, check=True,
                              capture_output=True).stdout
        dst = os.path.join(stage, path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as fh:
            fh.write(data)
        pairs.append((dst, path))
    scratch, _ = rpg_scratch.index_copies(rpg, pairs)
    try:
        ents = defaultdict(list)
        for e in rpg_scratch.snapshot_entities(os.path.join(scratch, ".rpg", "graph.jsonl")):
            if e["kind"] == "file":
                continue
            q = e["qualname"].split("#")[0]
            name = q.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
            side = "type" if e["kind"] == "class" else "callable"
            ents[e["path"]].append((side, name, e["start_line"], e["end_line"], e["qualname"]))
        if ctags_lang:
            tags = subprocess.run(
                ["ctags", "--output-format=json", "--fields=+nKe", f"--languages={ctags_lang}",
                 "-R", "-f", "-", "."],
                cwd=stage, check=True, capture_output=True, text=True).stdout
            tags = [json.loads(line) for line in tags.splitlines()]
        else:
            tags = [t for _, rel in pairs for t in keyword_scan(os.path.join(stage, rel), rel)]
        seen, found, missed = Counter(), Counter(), []
        matched = set()
        for t in tags:
            side = kinds.get(t.get("kind"))
            if side is None or not counted(lang, t, stage):
                continue
            path, name, at = t["path"].lstrip("./"), t["name"], t["line"]
            name = name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
            seen[t["kind"]] += 1
            hit = next((e for e in ents.get(path, ()) if side in (e[0], "either") and e[1] == name
                        and e[2] <= at <= e[3]), None)
            if hit:
                found[t["kind"]] += 1
                matched.add((path, hit[4]))
            else:
                missed.append(f"{path}:{at} {t['kind']} {t['name']}")
        total_seen, total_found = sum(seen.values()), sum(found.values())
        print(f"{lang}: {len(pairs)} files; ctags definitions found by rpg: "
              f"{total_found}/{total_seen} = {total_found / max(total_seen, 1):.4f}")
        for k in sorted(seen):
            print(f"  {k:<16} {found[k]:>6}/{seen[k]:<6} {found[k] / seen[k]:.4f}")
        extra = Counter()
        for path, es in ents.items():
            for side, name, start, end, q in es:
                if (path, q) not in matched:
                    extra[side] += 1
        print("rpg entities ctags has no tag for: " +
              ", ".join(f"{k} {v}" for k, v in sorted(extra.items())))
        for m in missed[:listed]:
            print("  missed", m)
    finally:
        shutil.rmtree(scratch)
        shutil.rmtree(stage)


if __name__ == "__main__":
    main(sys.argv)
