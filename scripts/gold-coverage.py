#!/usr/bin/env python3
"""Usage: scripts/gold-coverage.py CASES.jsonl OWNER/NAME=CLONE...

For each case, index the case's base commit of its repository's clone
with `rpg init` and report the gold functions the graph has no entity
for (ids compared after dropping a `#N` suffix). The clones are checked
out and written to; use scratch clones.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rpg_scratch  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rpg = os.environ.get("RPG_BIN", os.path.join(root, "target", "release", "rpg"))
cases = [json.loads(line) for line in open(sys.argv[1])]
clones = dict(arg.split("=", 1) for arg in sys.argv[2:])
missing = total = 0
for case in cases:
    d = clones.get(case["repo"])
    if d is None:
        sys.exit(f"no clone given for {case['repo']}")
    subprocess.run(["git", "-C", d, "checkout", "-q", "-f", case["base_commit"]], check=True)
    subprocess.run([rpg, "-C", d, "init"], capture_output=True, check=True)
    ids = set()
    for r in rpg_scratch.snapshot_entities(os.path.join(d, ".rpg", "graph.jsonl")):
        ids.add(r["id"].split("#")[0])
    for g in case["gold_functions"]:
        total += 1
        if g not in ids:
            missing += 1
            print("missing", case["id"], g)
print(f"{total - missing} of {total} gold functions found")
