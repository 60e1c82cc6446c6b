#!/usr/bin/env python3
"""Stand-in clones for the case files whose repositories `fetch` cannot bring.

Usage: scripts/sdist-clones.py CASES.jsonl WORK OUT_DIR [FUZZ]

python_dev_more.jsonl (Django, matplotlib, scikit-learn) needs histories
over the 500 MB this machine may fetch. PyPI serves each project's source
releases, tests included. For every case this picks the release nearest
before its fix: walking the releases oldest first, the last one of the
first run to which the case's gold patch applies (`patch --dry-run`, at
most FUZZ lines of fuzz, default 0). It then builds one git repository per
project under OUT_DIR (named `owner+name`, as `rpg eval --repo` expects),
one commit per release used, oldest first, and writes the cases that found
a release to OUT_DIR/<name>.jsonl with `base_commit` moved onto that
release's commit.

So the gold files hold the code as the fix found it, give or take the
patch's fuzz, while the rest of the tree is the release's, not the
commit's: an approximation for tuning, to be reported apart from the
dev sets. A commit holds a whole release, so `recent` changes carry no
signal here. WORK keeps the downloads and unpacked releases for reruns.
"""
import functools, json, os, re, subprocess, sys, tarfile, urllib.parse, urllib.request

# The releases to try per project: pre-releases too, since a fix on the
# main branch is nearest to the next series' alphas and release candidates.
RELEASES = {
    "django/django": ("Django", [f"{s}{p}" for s in ["2.0", "2.1", "2.2", "3.0", "3.1", "3.2",
                                                     "4.0", "4.1", "4.2", "5.0"]
                                 for p in ["a1", "b1", "rc1", ""]]),
    "scikit-learn/scikit-learn": ("scikit-learn", [
        "0.20.0", "0.20.4", "0.21.0", "0.21.3", "0.22", "0.22.2.post1", "0.23.0", "0.23.2",
        "0.24.0", "0.24.2", "1.0", "1.0.2", "1.1.0", "1.1.3", "1.2.0rc1", "1.2.0", "1.2.2",
        "1.3.0rc1", "1.3.0", "1.3.2"]),
    "matplotlib/matplotlib": ("matplotlib", [
        f"3.{m}.{p}" for m in range(1, 9) for p in ["0rc1", "0"]] + ["3.1.3"]),
}


def vkey(v):
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?(?:(a|b|rc)(\d+))?(?:\.post\d+)?$", v)
    a, b, c, pre, n = m.groups()
    return (int(a), int(b), int(c or 0), {"a": 0, "b": 1, "rc": 2, None: 3}[pre], int(n or 0))


def unpacked(project, version, work, index):
    """The release's tree under WORK, downloaded and unpacked once; None
    when PyPI has no source release of that version."""
    tree = os.path.join(work, "x", f"{project}-{version}")
    if os.path.isdir(tree):
        return tree
    tarball = os.path.join(work, f"{project}-{version}.tar.gz")
    if not os.path.exists(tarball):
        sdists = [u["url"] for u in index()["releases"].get(version, [])
                  if u["packagetype"] == "sdist"]
        if not sdists:
            return None
        url = urllib.parse.urljoin(f"https://pypi.org/pypi/{project}/json", sdists[0])
        print(f"fetching {project} {version}", file=sys.stderr)
        urllib.request.urlretrieve(url, tarball + ".part")
        os.replace(tarball + ".part", tarball)
    os.makedirs(tree + ".part", exist_ok=True)
    with tarfile.open(tarball) as t:
        for m in t.getmembers():
            # Drop the top directory; keep plain files and directories only.
            parts = m.name.split("/", 1)
            if len(parts) < 2 or ".." in parts[1].split("/") or not (m.isfile() or m.isdir()):
                continue
            m.name = parts[1]
            t.extract(m, tree + ".part", filter="data")
    os.replace(tree + ".part", tree)
    return tree


def pick(case, trees, fuzz):
    chosen = None
    for version, tree in trees:
        ok = subprocess.run(["patch", "-p1", "--dry-run", f"-F{fuzz}", "-s", "-f"], cwd=tree,
                            input=case["gold_patch"].encode(), capture_output=True).returncode == 0
        if ok:
            chosen = version
        elif chosen:
            break
    return chosen


def build(repo, versions, trees, clone):
    os.makedirs(clone, exist_ok=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="sdist", GIT_AUTHOR_EMAIL="sdist@example.invalid",
               GIT_COMMITTER_NAME="sdist", GIT_COMMITTER_EMAIL="sdist@example.invalid",
               GIT_AUTHOR_DATE="2020-01-01T00:00:00Z", GIT_COMMITTER_DATE="2020-01-01T00:00:00Z")
    subprocess.run(["git", "-C", clone, "init", "-q"], check=True)
    sha = {}
    for v in sorted(versions, key=vkey):
        g = ["git", f"--git-dir={clone}/.git", f"--work-tree={trees[v]}"]
        subprocess.run(g + ["add", "-A", "-f", "."], check=True, env=env)
        subprocess.run(g + ["commit", "-q", "--allow-empty", "-m", f"{repo} {v} sdist"],
                       check=True, env=env)
        sha[v] = subprocess.run(["git", "-C", clone, "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "-C", clone, "checkout", "-q", "-f", "HEAD"], check=True)
    return sha


def main():
    cases_path, work, out = sys.argv[1:4]
    fuzz = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    cases = [json.loads(l) for l in open(cases_path) if l.strip()]
    for repo in sorted({c["repo"] for c in cases}):
        if repo not in RELEASES:
            print(f"{repo}: no releases listed; skipped", file=sys.stderr)
            continue
        project, versions = RELEASES[repo]
        os.makedirs(os.path.join(work, "x"), exist_ok=True)
        index = functools.cache(lambda: json.load(
            urllib.request.urlopen(f"https://pypi.org/pypi/{project}/json")))
        # Oldest first, as `pick` walks them.
        trees = {v: t for v in sorted(versions, key=vkey)
                 if (t := unpacked(project, v, work, index)) is not None}
        picked = {c["id"]: pick(c, list(trees.items()), fuzz) for c in cases if c["repo"] == repo}
        used = {v for v in picked.values() if v}
        clone = os.path.join(out, repo.replace("/", "+"))
        sha = build(repo, used, trees, clone)
        order = {v: i for i, v in enumerate(sorted(used, key=vkey))}
        kept = sorted((c for c in cases if picked.get(c["id"])),
                      key=lambda c: (order[picked[c["id"]]], c["id"]))
        name = repo.split("/")[1]
        with open(os.path.join(out, f"{name}.jsonl"), "w") as f:
            for c in kept:
                v = picked[c["id"]]
                c["base_commit"] = sha[v]
                c["source"] = f"{c.get('source', '')}; tree of the {project} {v} sdist"
                f.write(json.dumps(c) + "\n")
        print(f"{repo}: {len(kept)} of {len(picked)} cases on {len(used)} releases "
              f"-> {out}/{name}.jsonl")


if __name__ == "__main__":
    main()
