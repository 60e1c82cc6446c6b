#!/usr/bin/env bash
# Usage: scripts/bench-scale.sh [SRC] [WORK]
#
# Monorepo scale (issue 22). Copies every *.rs under SRC (default: the
# cargo registry, $CARGO_HOME/registry/src/*/) into one scratch git
# repository, and every eighth crate of it (about 420k lines, a tenth
# of the lines) into a small one, then:
#   - `rpg init` of both, with per-phase timings (RPG_TIMINGS) and peak RSS,
#     and the lines-per-second ratio big / small;
#   - 50 scripted commits (function edits, renames of common names, file
#     moves), each followed by the post-commit hook's own `rpg hook run
#     post-commit`, then 50 more, each followed by `rpg update --snapshot`
#     (RPG_BENCH_COMMITS sets how many);
#   - 50 `rpg locate` queries (the Rust dev set's first 50 issue texts).
# Prints one table. WORK (default: a new temporary directory) is kept, so a
# second run can reuse its corpus; nothing is written outside it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RPG_BIN:-$root/target/release/rpg}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
src=${1:-${CARGO_HOME:-$HOME/.cargo}/registry/src}
work=${2:-$(mktemp -d)}
mkdir -p "$work"

corpus() { # corpus NAME STEP: every STEP-th crate directory of SRC
  local dir=$work/$1 step=$2 i=0
  [ -d "$dir/.git" ] && return
  mkdir -p "$dir"
  for index in "$src"/*/; do
    for krate in "$index"*/; do
      i=$((i + 1))
      [ $((i % step)) -eq 0 ] || continue
      (cd "$index" && find "$(basename "$krate")" -name '*.rs' -type f -print0 |
        xargs -0 -r cp --parents -t "$dir")
    done
  done
  git -C "$dir" init -q
  git -C "$dir" add -A
  git -C "$dir" -c user.name=bench -c user.email=bench@rpg commit -qm corpus
}
echo "corpus under $work" >&2
corpus big 1
corpus small 8

python3 - "$bin" "$work" "$root" <<'PY'
import json, os, random, re, statistics, subprocess, sys, time

rpg, work, root = sys.argv[1:4]
env = dict(os.environ, RPG_TIMINGS="1", GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@rpg",
           GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@rpg")


def timed(args, cwd):
    """Wall seconds, peak RSS MB, stdout and stderr of one command."""
    t = time.perf_counter()
    r, w = os.pipe()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f"/dev/fd/{w}", *args], cwd=cwd, env=env,
                       capture_output=True, text=True, pass_fds=(w,))
    os.close(w)
    rss = int(os.read(r, 100).decode().split()[-1]) / 1024
    os.close(r)
    wall = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall, rss, p.stdout, p.stderr


def phases(stderr):
    out = {}
    for m in re.finditer(r"timing (.+?): ([0-9.]+)s \(rss (\d+) kB", stderr):
        out[m.group(1)] = (float(m.group(2)), int(m.group(3)) / 1024)
    return out


def init(name):
    d = os.path.join(work, name)
    subprocess.run(["rm", "-rf", os.path.join(d, ".rpg")], check=True)
    wall, rss, out, err = timed([rpg, "init", "--json"], d)
    j = json.loads(out)
    c = j["counts"]
    ents = c["files"] + c["classes"] + c["functions"] + c["methods"]
    store = int(subprocess.run(["du", "-sb", os.path.join(d, ".rpg", "store")], capture_output=True,
                               text=True).stdout.split()[0])
    return dict(wall=wall, rss=rss, lines=j["report"]["lines"], entities=ents,
                snapshot=j["snapshot_bytes"], store=store, phases=phases(err))


def git(d, *args):
    return subprocess.run(["git", *args], cwd=d, env=env, check=True, capture_output=True,
                          text=True).stdout


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs))) - 1))]


def commits(d, n, rnd, command):
    """n scripted commits, each followed by `command`; (kind, wall, rss, file)."""
    files = [f for f in git(d, "ls-files").split("\n") if f.endswith(".rs")]
    defs = {}
    for f in rnd.sample(files, min(len(files), 3000)):
        with open(os.path.join(d, f), errors="replace") as fh:
            for name in re.findall(r"\bfn (\w+)\s*[(<]", fh.read()):
                defs.setdefault(name, []).append(f)
    common = sorted((n for n, fs in defs.items() if len(fs) >= 20), key=lambda n: -len(defs[n]))[:40]
    out = []
    for i in range(n):
        kind = ("edit", "edit", "edit", "rename", "move")[i % 5]
        if kind == "edit":
            f = rnd.choice(files)
            text = open(os.path.join(d, f), errors="replace").read()
            m = re.search(r"\bfn \w+[^;{]*\{\n", text)
            if not m:
                kind, text = "edit", text + f"\nfn bench_added_{i}() {{}}\n"
            else:
                text = text[:m.end()] + f"    let _bench_{i} = {i};\n" + text[m.end():]
            open(os.path.join(d, f), "w").write(text)
        elif kind == "rename":
            name = rnd.choice(common)
            f = rnd.choice(defs[name])
            text = open(os.path.join(d, f), errors="replace").read()
            text = re.sub(rf"\bfn {name}\b", f"fn {name}_all", text, count=1)
            open(os.path.join(d, f), "w").write(text)
        else:
            f = rnd.choice(files)
            new = f[:-3] + f"_moved{i}.rs"
            git(d, "mv", f, new)
            files[files.index(f)] = new
        git(d, "commit", "-qam", f"bench {kind} {i}")
        wall, rss, _, _ = timed(command, d)
        out.append((kind, wall, rss, f))
    return out


def locate(d):
    cases = [json.loads(l) for l in open("/work/shared/eval/dev/rust_dev.jsonl")][:50] \
        if os.path.exists("/work/shared/eval/dev/rust_dev.jsonl") else []
    queries = [c["query"] for c in cases] or [f"{n} panics when called twice" for n in
                                               ("parse", "read", "write", "spawn", "connect")] * 10
    walls = []
    for q in queries:
        t = time.perf_counter()
        subprocess.run([rpg, "locate", "--json", "--top-k", "5", q], cwd=d, capture_output=True)
        walls.append(time.perf_counter() - t)
    return walls


small, big = init("small"), init("big")
rate = lambda r: r["lines"] / r["wall"]
d = os.path.join(work, "big")
rnd = random.Random(22)
n = int(os.environ.get("RPG_BENCH_COMMITS", "50"))
hook = commits(d, n, rnd, [rpg, "hook", "run", "post-commit"])
snap = commits(d, n, rnd, [rpg, "update", "--snapshot"])
loc = locate(d)

print(f"| step | figure | note |")
print(f"|---|---|---|")
for name, r in (("small", small), ("big", big)):
    print(f"| `rpg init`, {name} | {r['wall']:.1f} s, {r['rss']:.0f} MB peak RSS | {r['lines']:,} lines, "
          f"{r['entities']:,} entities, {rate(r):,.0f} lines/s |")
print(f"| linearity | {rate(big) / rate(small):.2f} | lines/s big / small (target ≥ 0.8) |")
for p, (s, m) in big["phases"].items():
    sp = small["phases"].get(p, (0, 0))[0]
    print(f"| — {p} | {s:.1f} s (rss {m:.0f} MB) | small {sp:.2f} s, ×{s / sp if sp else 0:.1f} |")
print(f"| snapshot | {big['snapshot'] / 1e6:.1f} MB, {big['snapshot'] / big['entities']:.0f} bytes per entity | |")
print(f"| sled store | {big['store'] / 1e6:.0f} MB | |")
for label, runs in (("post-commit hook", hook), ("`rpg update --snapshot`", snap)):
    walls = [w * 1000 for _, w, _, _ in runs]
    rss = [m for _, _, m, _ in runs]
    by = {k: [w * 1000 for kk, w, _, _ in runs if kk == k] for k in ("edit", "rename", "move")}
    print(f"| {label} | median {statistics.median(walls):.0f} ms, p95 {pct(walls, 0.95):.0f} ms, "
          f"max {max(walls):.0f} ms; RSS median {statistics.median(rss):.0f} MB | "
          + ", ".join(f"{k} median {statistics.median(v):.0f} ms" for k, v in by.items() if v) + " |")
for label, runs in (("hook", hook), ("update --snapshot", snap)):
    slow = sorted(runs, key=lambda r: -r[1])[:3]
    print(f"| slowest, {label} | " + ", ".join(f"{w * 1000:.0f} ms" for _, w, _, _ in slow) + " | "
          + ", ".join(f"{k} {f}" for k, _, _, f in slow) + " |")
ms = [w * 1000 for w in loc]
print(f"| `rpg locate` | p50 {statistics.median(ms):.0f} ms, p95 {pct(ms, 0.95):.0f} ms | {len(ms)} queries |")
PY
