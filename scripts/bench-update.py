#!/usr/bin/env python3
"""Replay the last N first-parent commits of a repository through `rpg update`.

Usage: scripts/bench-update.py REPO [N]

Works on a throwaway clone of REPO. Indexes HEAD~N with `rpg init`, then
updates commit by commit, recording each update's wall time and how many
entities it lifted. Prints the median and p95 update time, their ratio to
a full `rpg init` of the final tree, and entities lifted incrementally
versus rebuilding the whole graph at every commit.
"""
import json, os, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rpg = os.environ.get("RPG_BIN", os.path.join(root, "target", "release", "rpg"))
repo, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200


def run(*args, cwd):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True).stdout


with tempfile.TemporaryDirectory() as tmp:
    work = os.path.join(tmp, "repo")
    run("git", "clone", "-q", "--no-checkout", repo, work, cwd=tmp)
    commits = run("git", "rev-list", "--first-parent", f"-n{n + 1}", "HEAD", cwd=work).split()[::-1]
    run(rpg, "init", "--rev", commits[0], cwd=work)
    times, lifted, entities, changed = [], [], [], []
    for c in commits[1:]:
        t = time.perf_counter()
        out = json.loads(run(rpg, "update", "--to", c, "--json", cwd=work))
        times.append(time.perf_counter() - t)
        u = out["updates"][0]
        lifted.append(u["entities_lifted"])
        changed.append(u["files_changed"])
        s = json.loads(run(rpg, "status", "--json", cwd=work))["counts"]
        entities.append(s["files"] + s["classes"] + s["functions"] + s["methods"])
    inits = []
    for _ in range(3):
        t = time.perf_counter()
        run(rpg, "init", "--rev", commits[-1], cwd=work)
        inits.append(time.perf_counter() - t)
    times_ms = sorted(x * 1000 for x in times)
    med = statistics.median(times_ms)
    p95 = times_ms[min(len(times_ms) - 1, int(round(0.95 * len(times_ms))) - 1)]
    init_ms = statistics.median(inits) * 1000
    full = sum(entities)
    inc = sum(lifted)
    print(f"commits replayed        {len(times)}")
    print(f"files changed / commit  median {statistics.median(changed):.0f}, max {max(changed)}")
    print(f"update wall             median {med:.1f} ms, p95 {p95:.1f} ms, max {times_ms[-1]:.1f} ms")
    print(f"full init wall          median {init_ms:.0f} ms ({entities[-1]} entities)")
    print(f"update / init           median {med / init_ms:.3%}, p95 {p95 / init_ms:.3%}")
    print(f"entities lifted         incremental {inc}, full rebuild every commit {full}")
    print(f"lifting reduction       {1 - inc / full:.3%}")
