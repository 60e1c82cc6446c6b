#!/usr/bin/env python3
"""Embedding throughput and memory: `rpg embed` from scratch on each repository.

Usage: scripts/bench-embed.py REPO [REPO...]

Each REPO must already have a graph (`rpg init`). Its .rpg/vectors is
moved aside for the run and restored afterwards, so the figure is a full
embed. Prints entities embedded, wall time, entities per second and peak
RSS per repository, then the totals. Needs scripts/setup-embeddings.sh.
"""
import json, os, shutil, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rpg = os.environ.get("RPG_BIN", os.path.join(root, "target", "release", "rpg"))

total_n, total_s = 0, 0.0
for repo in sys.argv[1:]:
    vectors = os.path.join(repo, ".rpg", "vectors")
    aside = vectors + ".bench-aside"
    if os.path.exists(vectors):
        os.rename(vectors, aside)
    try:
        t = time.perf_counter()
        # GNU time reports the peak resident set of the child.
        out = subprocess.run(["/usr/bin/time", "-f", "%M", rpg, "embed", "--json"], cwd=repo,
                             check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t
        report = json.loads(out.stdout)
        rss_mb = int(out.stderr.strip().splitlines()[-1]) / 1024
    finally:
        shutil.rmtree(vectors, ignore_errors=True)
        if os.path.exists(aside):
            os.rename(aside, vectors)
    n = report["embedded"]
    total_n, total_s = total_n + n, total_s + wall
    print(f"{os.path.basename(os.path.abspath(repo))}: {n} entities in {wall:.1f} s "
          f"({n / wall:.0f}/s), peak RSS {rss_mb:.0f} MB")
if len(sys.argv) > 2:
    print(f"total: {total_n} entities in {total_s:.1f} s ({total_n / total_s:.0f}/s)")
