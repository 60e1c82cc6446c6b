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
