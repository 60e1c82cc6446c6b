#!/usr/bin/env bash
# Replay a repository's last N first-parent commits through `rpg update`
# in a scratch clone, then compare the evolved snapshot with a fresh
# `rpg init` of the same commit, line by line (hierarchy leaves and
# lifters aside, which evolution may legitimately place differently).
# Prints how many entity and file lines differ each way, and a few of
# them; exits 1 when any do.
#
# usage: scripts/replay-history.sh CLONE [N]    (RPG_BIN picks the binary)
set -euo pipefail
src=$(cd "$1" && pwd); n=${2:-40}
rpg=${RPG_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/rpg}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/r"; cd "$work/r"
commits=$(git rev-list --first-parent --reverse -n "$n" HEAD)
git -c advice.detachedHead=false checkout -q "$(echo "$commits" | head -1)~1"
"$rpg" init >/dev/null 2>&1
for c in $commits; do
  git -c advice.detachedHead=false checkout -q "$c"
  "$rpg" update >/dev/null 2>&1 || { echo "rpg update failed at $c" >&2; exit 2; }
done
"$rpg" update --snapshot >/dev/null 2>&1
cp .rpg/graph.jsonl "$work/evolved.jsonl"
rm -rf .rpg && "$rpg" init >/dev/null 2>&1
python3 - "$work/evolved.jsonl" .rpg/graph.jsonl <<'PY'
import json, sys

def lines(path):
    out, file = set(), None
    for raw in open(path):
        r = json.loads(raw)
        t = r.get("t", "entity")
        if t == "file":
            file = r["path"]
            out.add((file, raw.strip()))
        elif t == "entity":
            r.pop("leaf", None)
            r.pop("lifter", None)
            out.add((file, json.dumps(r, sort_keys=True)))
    return out

evolved, fresh = lines(sys.argv[1]), lines(sys.argv[2])
print(f"lines only after updates: {len(evolved - fresh)}, only after init: {len(fresh - evolved)}")
for tag, diff in (("updates", evolved - fresh), ("init", fresh - evolved)):
    for file, line in sorted(diff)[:3]:
        print(f"  {tag}: {file} {line[:240]}")
sys.exit(1 if evolved != fresh else 0)
PY
