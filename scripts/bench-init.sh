#!/usr/bin/env bash
# Usage: scripts/bench-init.sh REPO [RUNS]
# Runs a full `rpg init` of REPO RUNS times (default 3) with the release
# binary and prints the median wall time, peak RSS, counts and snapshot size.
#
#        scripts/bench-init.sh --phases ROUNDS REPO...
# How each phase grows (issue 48): ROUNDS rounds of one `rpg init` of each
# REPO in turn (so each round's figures share an hour of this machine's
# speed), printing every phase's seconds and seconds per million lines.
# Give nested trees, smallest first, to see whether a phase grows faster
# than the lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RPG_BIN:-$root/target/release/rpg}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --phases ]; then
  rounds=$2
  shift 2
  for round in $(seq "$rounds"); do
    for repo in "$@"; do
      rm -rf "$repo/.rpg/store"
      RPG_TIMINGS=1 /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" -C "$repo" init --json \
        > "$tmp/out" 2> "$tmp/err"
      python3 - "$tmp" "$round" "$repo" <<'PY'
import json, re, sys
tmp, round_, repo = sys.argv[1:4]
lines = json.load(open(f"{tmp}/out"))["report"]["lines"]
wall, rss = open(f"{tmp}/time").read().split()
phases = ["parse", "lift", "resolution", "hierarchy, beside resolution", "resolve+hierarchy",
          "snapshot seal", "snapshot+store", "search index"]
took = dict(re.findall(r"^timing ([^:]+): ([0-9.]+)s", open(f"{tmp}/err").read(), re.M))
cells = [f"{p.split(',')[0]} {float(took[p]):.2f} s ({float(took[p]) / lines * 1e6:.3f})"
         for p in phases if p in took]
print(f"round {round_}  {repo}  {lines:,} lines  wall {float(wall):.1f} s  peak {int(rss) // 1024} MB")
print("  " + "; ".join(cells))
PY
    done
  done
  echo "(each phase: seconds, then seconds per million lines)"
  exit 0
fi

repo=$1
runs=${2:-3}
for i in $(seq "$runs"); do
  rm -rf "$repo/.rpg/store"
  /usr/bin/time -f '%e %M' -o "$tmp/time.$i" "$bin" -C "$repo" init --json > "$tmp/out.$i"
done
python3 - "$tmp" "$runs" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
walls, rss = [], []
for i in range(1, runs + 1):
    w, m = open(f"{tmp}/time.{i}").read().split()
    walls.append(float(w)); rss.append(int(m) / 1024)
out = json.load(open(f"{tmp}/out.{runs}"))
c = out["counts"]
print(f"lines            {out['report']['lines']}")
print(f"files indexed    {out['report']['files_indexed']} (skipped {sum(out['report']['skipped'].values())})")
print(f"wall median      {statistics.median(walls):.2f} s  (runs: {', '.join(f'{w:.2f}' for w in walls)})")
print(f"throughput       {out['report']['lines'] / statistics.median(walls):,.0f} lines/s (median run)")
print(f"peak RSS median  {statistics.median(rss):.0f} MB")
print(f"entities         {c['files']} files, {c['classes']} classes, {c['functions']} functions, {c['methods']} methods, {c.get('macros', 0)} macros")
print(f"edges            {sum(c['edges'].values())} ({', '.join(f'{k} {v}' for k, v in sorted(c['edges'].items()))})")
print(f"categories       {c['categories']}")
print(f"snapshot         {out['snapshot_bytes']} bytes")
PY
