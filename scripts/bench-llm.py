#!/usr/bin/env python3
"""What the model lifter costs, measured against a local mock model.

    scripts/bench-llm.py REPO [REPO ...]

For each repository (a clone; it is copied, never written) this starts a
mock OpenAI-compatible server that answers every key its strict schema
asks for and reports usage as a tokenizer would (about four characters a
token of the messages and schema it was sent), then runs the release
build's `rpg init --lifter llm` and a one-function commit through
`rpg update`, and prints requests, tokens and tokens per entity. Token
counts are the mock's, so they measure what rpg sends, not a model's
verbosity.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RPG = os.path.join(ROOT, "target", "release", "rpg")


def answer(body):
    fmt = body["response_format"]["json_schema"]
    schema, name = fmt["schema"], fmt["name"]
    system = body["messages"][0]["content"]
    if name == "areas":
        return {"areas": ["core logic", "interfaces", "support tools"]}
    if name == "route":
        return {"choice": schema["properties"]["choice"]["enum"][0]}
    if name == "drift":
        return {"changed_purpose": False}
    out = {}
    for k in schema["required"]:
        words = " ".join("".join(c if c.isalnum() else " " for c in k.lower()).split()[-3:])
        if "three-level" in system:
            out[k] = f"core logic/{words}/general"
        else:
            out[k] = [f"compute {words} result", f"validate {words} input"]
    return out


class Mock(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        content = json.dumps(answer(body))
        sent = sum(len(m.get("content") or "") for m in body["messages"])
        sent += len(json.dumps(body["response_format"]))
        prompt, completion = sent // 4, len(content) // 4
        reply = json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def run(args, cwd):
    t = time.perf_counter()
    out = subprocess.run([RPG, *args], cwd=cwd, capture_output=True, text=True,
                         env={**os.environ, "OPENAI_API_KEY": "mock"})
    if out.returncode != 0:
        sys.exit(f"rpg {' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout), time.perf_counter() - t


def one_function_commit(work):
    files = subprocess.run(["git", "ls-files", "*.py", "*.rs"], cwd=work, capture_output=True,
                           text=True).stdout.split()
    files = [f for f in files if "test" not in f and "/" in f] or files
    target = sorted(files, key=lambda f: os.path.getsize(os.path.join(work, f)))[len(files) // 2]
    with open(os.path.join(work, target), "a") as f:
        if target.endswith(".rs"):
            f.write("\n\npub fn bench_added(n: usize) -> usize {\n    n * 2\n}\n")
        else:
            f.write("\n\ndef bench_added(n):\n    \"\"\"Double a count.\"\"\"\n    return n * 2\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "commit", "-qam", "bench"], cwd=work, check=True)
    return target


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Mock)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    for repo in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, "repo")
            subprocess.run(["git", "clone", "-q", "--local", "--no-hardlinks", repo, work],
                           check=True)
            os.makedirs(os.path.join(work, ".rpg"), exist_ok=True)
            with open(os.path.join(work, ".rpg", "config.toml"), "w") as f:
                f.write(f'[lift]\nlifter = "llm"\nmodel = "mock"\nbase_url = "{base}"\n')
            init, secs = run(["init", "--json"], work)
            m = init["model"]
            c = init["counts"]
            entities = c["classes"] + c["functions"] + c["methods"]
            total = m["prompt_tokens"] + m["completion_tokens"]
            print(f"{os.path.basename(repo.rstrip('/'))}: {c['files']} files, {entities} entities")
            print(f"  init:   {m['requests']} requests, {m['prompt_tokens']} prompt + "
                  f"{m['completion_tokens']} completion tokens, {secs:.1f}s; "
                  f"{total / max(entities, 1):.0f} tokens per entity (files and hierarchy included)")
            again, secs = run(["init", "--json"], work)
            print(f"  re-init: {again['model']['requests']} requests ({secs:.1f}s)")
            target = one_function_commit(work)
            upd, secs = run(["update", "--json"], work)
            u = upd.get("model") or {}
            print(f"  one-function commit ({target}): {u.get('requests', 0)} requests, "
                  f"{u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} "
                  f"completion tokens, {secs:.1f}s")
            shutil.rmtree(os.path.join(work, ".rpg", "cache"), ignore_errors=True)
    server.shutdown()


if __name__ == "__main__":
    main()
