#!/usr/bin/env python3
"""Warm `rpg locate` latency on an indexed repository.

Usage: scripts/bench-locate.py REPO CASES.jsonl [N]

Runs the first N (default 50) issue texts of a case file as queries
against REPO (which must already have a graph: `rpg init`), each through
the real CLI, after one warm-up query. Prints the entity count and the
median, p90 and p95 wall time per query.
"""
import json, os, statistics, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rpg = os.environ.get("RPG_BIN", os.path.join(root, "target", "release", "rpg"))
repo, cases = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 50
queries = [json.loads(l)["query"] for l in open(cases) if l.strip()][:n]

status = json.loads(subprocess.run([rpg, "status", "--json"], cwd=repo, check=True,
                                   capture_output=True, text=True).stdout)
c = status["counts"]
entities = c["files"] + c["classes"] + c["functions"] + c["methods"]

def locate(q):
    t = time.perf_counter()
    subprocess.run([rpg, "locate", "-", "--json"], cwd=repo, input=q, text=True,
                   capture_output=True)
    return (time.perf_counter() - t) * 1000

locate(queries[0])  # warm the page cache and build the index if missing
times = sorted(locate(q) for q in queries)
at = lambda p: times[round((len(times) - 1) * p)]
print(f"{entities} entities, {len(times)} queries: p50 {statistics.median(times):.0f} ms, "
      f"p90 {at(0.9):.0f} ms, p95 {at(0.95):.0f} ms")
