"""A scratch git repository holding copies of some files, indexed by rpg
with nothing excluded: what the coverage scripts compare against."""

import os
import shutil
import subprocess
import tempfile


def index_copies(rpg, pairs):
    """Copy each (source, relative path) into a new repository, commit,
    run `rpg init --json`, and return (scratch dir, parsed JSON). The
    caller removes the directory."""
    scratch = tempfile.mkdtemp(prefix="rpg-coverage-")
    for src, rel in pairs:
        dst = os.path.join(scratch, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
    env = dict(os.environ, GIT_AUTHOR_NAME="c", GIT_AUTHOR_EMAIL="c@x",
               GIT_COMMITTER_NAME="c", GIT_COMMITTER_EMAIL="c@x")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "c"]):
        subprocess.run(cmd, cwd=scratch, env=env, check=True)
    # Vendored-looking paths and large files are skipped by default; here
    # everything counts.
    os.makedirs(os.path.join(scratch, ".rpg"), exist_ok=True)
    with open(os.path.join(scratch, ".rpg", "config.toml"), "w") as fh:
        fh.write('[index]\nexclude = [".rpg/**"]\nmax_file_bytes = 100000000\n')
    import json
    out = subprocess.run([rpg, "init", "--json"], cwd=scratch, check=True,
                         capture_output=True, text=True).stdout
    return scratch, json.loads(out)


def snapshot_entities(graph_jsonl):
    """Each entity of a snapshot (schema 3 or 4) as a dict with its "path",
    "qualname", "id", "kind", "start_line" and "end_line" filled in from
    what its file's group of lines leaves out."""
    import json
    path = None
    with open(graph_jsonl) as fh:
        for line in fh:
            r = json.loads(line)
            t = r.get("t", "entity")
            if t == "file":
                path = r["path"]
            if t != "entity":
                continue
            r.setdefault("path", path)
            q = r.setdefault("qualname", "")
            r.setdefault("id", f"{r['path']}:{q}" if q else r["path"])
            if "lines" in r:
                r["start_line"], r["end_line"] = r["lines"]
            yield r


def snapshot_files(graph_jsonl):
    """The paths of a snapshot's file records."""
    import json
    with open(graph_jsonl) as fh:
        for line in fh:
            if line.startswith('{"t":"file",'):
                yield json.loads(line)["path"]
