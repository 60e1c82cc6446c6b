#!/usr/bin/env python3
"""Localization metrics for `rpg locate` on a case file.

Usage: scripts/eval.py CASES.jsonl REPOS_DIR [-- extra locate flags]

REPOS_DIR holds a clone of each case's repository, named after the
repository (`psf/requests` -> REPOS_DIR/requests). Each clone is copied
to a scratch directory; cases are taken in commit-date order per
repository: `rpg init` at the first base commit, `rpg update` to each
later one, so evolution runs over real history.

Prints Hit@k, Acc@k and Recall@k for k = 1, 3, 5, 10, and MRR, at file and
function level, overall and per repository, plus locate latency.
"""
import json, os, statistics, subprocess, sys, tempfile, time
from collections import defaultdict

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rpg = os.environ.get("RPG_BIN", os.path.join(root, "target", "release", "rpg"))
args = sys.argv[1:]
extra = []
if "--" in args:
    i = args.index("--")
    args, extra = args[:i], args[i + 1:]
cases_path, repos_dir = args[0], args[1]
KS = (1, 3, 5, 10)


def run(*a, cwd, input=None):
    return subprocess.run(a, cwd=cwd, check=True, capture_output=True, text=True, input=input).stdout


def norm_fn(f):
    return f[: -len(".__init__")] if f.endswith(".__init__") else f


def metrics(ranked, gold):
    out = {}
    gold = set(gold)
    if not gold:
        return None
    for k in KS:
        top = set(ranked[:k])
        out[f"hit@{k}"] = float(bool(top & gold))
        out[f"acc@{k}"] = float(gold <= top)
        out[f"recall@{k}"] = len(top & gold) / len(gold)
    rr = 0.0
    for i, r in enumerate(ranked):
        if r in gold:
            rr = 1.0 / (i + 1)
            break
    out["mrr"] = rr
    return out


cases = [json.loads(l) for l in open(cases_path)]
by_repo = defaultdict(list)
for c in cases:
    by_repo[c["repo"]].append(c)
results = defaultdict(lambda: defaultdict(list))
latencies = []
with tempfile.TemporaryDirectory() as tmp:
    for repo, rcases in sorted(by_repo.items()):
        src = os.path.join(repos_dir, repo.split("/")[-1])
        work = os.path.join(tmp, repo.split("/")[-1])
        run("git", "clone", "-q", "--no-checkout", src, work, cwd=tmp)
        date = lambda c: int(run("git", "show", "-s", "--format=%ct", c["base_commit"], cwd=work))
        rcases.sort(key=date)
        first = True
        for c in rcases:
            if first:
                run(rpg, "init", "--rev", c["base_commit"], cwd=work)
                first = False
            else:
                run(rpg, "update", "--to", c["base_commit"], cwd=work)
            t = time.perf_counter()
            out = json.loads(run(rpg, "locate", "-", "--json", "--top-k", "50", *extra, cwd=work, input=c["query"]) or "{}")
            latencies.append(time.perf_counter() - t)
            files = [f["path"] for f in out.get("files", [])]
            fns = [norm_fn(f["id"]) for f in out.get("functions", [])]
            gold_files = c.get("gold_files_rs") or c["gold_files"]
            gold_fns = [norm_fn(f) for f in c["gold_functions"]]
            if os.environ.get("EVAL_VERBOSE") and gold_fns and not set(fns[:5]) & set(gold_fns):
                print(f"MISS {c['id']}: gold {gold_fns[:3]}", file=sys.stderr)
                for f in fns[:5]:
                    print(f"     got {f}", file=sys.stderr)
                rank = next((i for i, f in enumerate(fns) if f in gold_fns), None)
                print(f"     gold rank {rank}; files {files[:3]}", file=sys.stderr)
            for level, ranked, gold in (("file", files, gold_files), ("function", fns, gold_fns)):
                m = metrics(ranked, gold)
                if m:
                    results[level]["all"].append(m)
                    results[level][repo].append(m)


def show(level):
    print(f"{level} level")
    header = ["scope", "n"] + [f"hit@{k}" for k in KS] + [f"acc@{k}" for k in KS] + ["recall@5", "mrr"]
    print("  " + " ".join(f"{h:>10}" for h in header))
    for scope, ms in sorted(results[level].items(), key=lambda x: (x[0] != "all", x[0])):
        row = [scope.split("/")[-1][:10], str(len(ms))]
        for key in [f"hit@{k}" for k in KS] + [f"acc@{k}" for k in KS] + ["recall@5", "mrr"]:
            row.append(f"{statistics.mean(m[key] for m in ms):.3f}")
        print("  " + " ".join(f"{x:>10}" for x in row))


show("file")
show("function")
lat = sorted(x * 1000 for x in latencies)
print(f"locate latency: p50 {statistics.median(lat):.0f} ms, p95 {lat[int(0.95 * (len(lat) - 1))]:.0f} ms")
