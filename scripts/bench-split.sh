#!/usr/bin/env bash
# Usage: scripts/bench-split.sh REPO [PARTS] [WORK]
#
# What indexing a monorepo in parallel jobs would buy and lose (issue 22,
# "beyond one machine"). Splits REPO's HEAD by top-level directory, round
# robin in name order, into PARTS (default 4) scratch repositories under
# WORK, runs `rpg init` on the whole and on each part, and prints:
#   - wall time and peak RSS of the whole and of each part, and the
#     slowest part against the whole (what PARTS parallel jobs would take
#     before any merge);
#   - what concatenating the parts' graphs would get wrong: the edges of
#     the whole that no part has (they cross parts, or resolved by a name
#     unique only in the whole) and the edges parts have that the whole
#     does not (a name unique in one part, ambiguous in the whole).
# REPO is only read.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RPG_BIN:-$root/target/release/rpg}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ $# -ge 1 ] || { echo "usage: $0 REPO [PARTS] [WORK]" >&2; exit 2; }
repo=$(cd "$1" && pwd)
parts=${2:-4}
work=${3:-$(mktemp -d)}
mkdir -p "$work"
echo "parts under $work" >&2

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=b@rpg GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=b@rpg
mapfile -t tops < <(git -C "$repo" ls-tree --name-only HEAD)
for ((p = 0; p < parts; p++)); do
  dir=$work/part$p
  rm -rf "$dir"
  mkdir -p "$dir"
  names=()
  for ((i = p; i < ${#tops[@]}; i += parts)); do names+=("${tops[i]}"); done
  [ ${#names[@]} -gt 0 ] && git -C "$repo" archive HEAD -- "${names[@]}" | tar -x -C "$dir"
  git -C "$dir" init -q
  git -C "$dir" add -A
  git -C "$dir" commit -qm "part $p" --allow-empty
done
rm -rf "$work/whole"
git clone -q --no-checkout --shared "$repo" "$work/whole"
git -C "$work/whole" update-ref --no-deref HEAD "$(git -C "$repo" rev-parse HEAD)"

python3 - "$bin" "$work" "$parts" "$root/scripts" <<'PY'
import os, subprocess, sys, time

rpg, work, parts, scripts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, scripts)
from rpg_scratch import snapshot_entities


def init(d):
    """Wall seconds and peak RSS MB of `rpg init` in d."""
    t = time.perf_counter()
    r, w = os.pipe()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f"/dev/fd/{w}", rpg, "init"], cwd=d,
                       capture_output=True, text=True, pass_fds=(w,))
    os.close(w)
    rss = int(os.read(r, 100).decode().split()[-1]) / 1024
    os.close(r)
    if p.returncode != 0:
        sys.exit(f"rpg init in {d} failed: {p.stderr[-2000:]}")
    return time.perf_counter() - t, rss


def edges(d):
    """(kind, src, dst) of every edge but `contains` in d's snapshot."""
    out = set()
    for e in snapshot_entities(os.path.join(d, ".rpg", "graph.jsonl")):
        for kind, dsts in e.get("out", {}).items():
            if kind == "contains":
                continue
            for dst in dsts:
                if dst.startswith("./"):
                    dst = f"{e['path']}:{dst[2:]}"
                out.add((kind, e["id"], dst))
    return out


whole = os.path.join(work, "whole")
w_wall, w_rss = init(whole)
rows, part_edges = [], set()
for p in range(parts):
    d = os.path.join(work, f"part{p}")
    wall, rss = init(d)
    e = edges(d)
    part_edges |= e
    rows.append((p, wall, rss, len(e)))
all_edges = edges(whole)
lost = all_edges - part_edges
extra = part_edges - all_edges
slowest = max(r[1] for r in rows)

print(f"| step | wall | peak RSS | edges (no contains) |")
print(f"|---|---|---|---|")
print(f"| whole | {w_wall:.1f} s | {w_rss:.0f} MB | {len(all_edges):,} |")
for p, wall, rss, n in rows:
    print(f"| part {p} | {wall:.1f} s | {rss:.0f} MB | {n:,} |")
print()
print(f"{parts} parallel jobs: the slowest part takes {slowest:.1f} s, "
      f"{slowest / w_wall:.2f} of the whole; the parts together {sum(r[1] for r in rows):.1f} s")
by_kind = lambda s: ", ".join(f"{k} {sum(1 for e in s if e[0] == k):,}"
                             for k in sorted({e[0] for e in s})) or "none"
print(f"concatenating the parts' graphs: {len(lost):,} edges of the whole missing "
      f"({len(lost) / max(len(all_edges), 1):.1%}; {by_kind(lost)}), "
      f"{len(extra):,} edges the whole does not have ({by_kind(extra)})")
PY
