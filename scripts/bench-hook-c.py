#!/usr/bin/env python3
"""The post-commit hook on a large C tree (issue 48).

Usage: scripts/bench-hook-c.py REPO [N] [SEED]
       scripts/bench-hook-c.py REPO --rename HEADER:NAME... [--rounds R]

Makes N (default 50) scripted commits in REPO, which must already have a
graph (`rpg init`), each followed by the hook's own `rpg hook run
post-commit`: three edits to a function body in a random `.c` file for
each rename of a `static inline` in one of the two most-included headers
and each move of a `.c` file. The commits stay in REPO's history. Prints
each commit's wall time, then the median, p95 and max, per kind too.
RPG_BIN picks the binary (default: target/release/rpg).

With --rename, the same renames every run, so two binaries compare on
equal work: each NAME( in HEADER is renamed and committed, the hook timed,
then the rename is reverted by another commit (its hook untimed); R rounds
(default 2). Prints each rename's wall time and the median.
"""
import collections, os, random, re, statistics, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rpg = os.environ.get("RPG_BIN", os.path.join(root, "target", "release", "rpg"))
repo = sys.argv[1]
env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@rpg",
           GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@rpg")


def git(*args):
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True,
                          capture_output=True, text=True, errors="replace").stdout


def settle():
    """Wait for a catch-up left by an earlier run: timed hooks that find
    the graph locked would measure that run, not this one."""
    pending = os.path.join(repo, ".rpg", "pending")
    for _ in range(1200):
        if not os.path.exists(pending):
            return
        time.sleep(0.1)
    sys.exit("an update is still pending after 120 s")


def hook():
    t0 = time.perf_counter()
    r = subprocess.run([rpg, "hook", "run", "post-commit"], cwd=repo, capture_output=True)
    return (time.perf_counter() - t0) * 1000, r.returncode


if len(sys.argv) > 2 and sys.argv[2] == "--rename":
    args = sys.argv[3:]
    rounds = 2
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    walls = []
    settle()
    for _ in range(rounds):
        for target in args:
            header, name = target.split(":")
            p = os.path.join(repo, header)
            text = open(p, errors="replace").read()
            renamed = re.sub(rf"\b{re.escape(name)}\(", f"{name}_bench(", text, count=1)
            if renamed == text:
                sys.exit(f"{name}( is not in {header}")
            open(p, "w").write(renamed)
            git("commit", "-qam", f"bench rename {name}")
            wall, code = hook()
            open(p, "w").write(text)
            git("commit", "-qam", f"bench unrename {name}")
            hook()
            walls.append(wall)
            print(f"rename {wall:6.0f} ms  exit {code}  {target}", flush=True)
    print(f"{len(walls)} renames: median {statistics.median(walls):.0f} ms, max {max(walls):.0f} ms")
    sys.exit(0)

settle()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 50
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 49)

tracked = git("ls-files").split("\n")
files = [f for f in tracked if f.endswith(".c")]
headers = [f for f in tracked if f.endswith(".h")]
# The headers most often named by `#include`, matched to a tracked path by
# their suffix: where a rename reaches the most files.
named = collections.Counter(re.findall(r'#include\s*[<"]([^>"]+\.h)[>"]',
                                       git("grep", "-h", "#include", "--", "*.c", "*.h")))
by_suffix = {}
for h in headers:
    by_suffix.setdefault(h.split("/", 1)[-1], h)
    by_suffix.setdefault(h, h)
hot = []
for name, _ in named.most_common(200):
    path = by_suffix.get(name)
    text = open(os.path.join(repo, path), errors="replace").read() if path else ""
    if path and re.search(r"static inline \w+ \**\w+\(", text):
        hot.append(path)
    if len(hot) == 2:
        break

kinds = ("edit", "edit", "edit", "rename", "move")
runs = []
for i in range(n):
    kind = kinds[i % len(kinds)] if hot or kinds[i % len(kinds)] != "rename" else "edit"
    if kind == "edit":
        f = rnd.choice(files)
        p = os.path.join(repo, f)
        t = open(p, errors="replace").read()
        m = re.search(r"\n\{\n", t)
        t = t[:m.end()] + f"\t/* bench {i} */\n" + t[m.end():] if m else t + f"\n/* bench {i} */\n"
        open(p, "w").write(t)
    elif kind == "rename":
        f = rnd.choice(hot)
        p = os.path.join(repo, f)
        t = open(p, errors="replace").read()
        name = rnd.choice(re.findall(r"static inline \w+ \**(\w+)\(", t))
        open(p, "w").write(re.sub(rf"\b{name}\(", f"{name}_r{i}(", t, count=1))
        f = f"{f}:{name}"
    else:
        f = rnd.choice(files)
        new = f[:-2] + f"_moved{i}.c"
        git("mv", f, new)
        files[files.index(f)] = new
    git("commit", "-qam", f"bench {kind} {i}")
    wall, code = hook()
    runs.append((kind, wall))
    print(f"{kind:6} {wall:6.0f} ms  exit {code}  {f}", flush=True)

walls = sorted(w for _, w in runs)
if not walls:
    sys.exit(0)
p95 = walls[min(len(walls) - 1, max(0, round(0.95 * len(walls)) - 1))]
print(f"{len(walls)} commits: median {statistics.median(walls):.0f} ms, p95 {p95:.0f} ms, "
      f"max {walls[-1]:.0f} ms")
for k in ("edit", "rename", "move"):
    ws = [w for kk, w in runs if kk == k]
    if ws:
        print(f"  {k}: {len(ws)}, median {statistics.median(ws):.0f} ms, max {max(ws):.0f} ms")
