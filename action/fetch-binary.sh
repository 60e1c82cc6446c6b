#!/usr/bin/env bash
# Download a pinned prebuilt rpg, check its sha256, and put it in DIR.
# usage: fetch-binary.sh URL SHA256 DIR
set -euo pipefail
url="${1:?URL}" want="${2:-}" dir="${3:?DIR}"
if [[ ! "$want" =~ ^[0-9a-f]{64}$ ]]; then
  echo "::error::rpg: rpg-binary-sha256 must be the 64-hex sha256 of the file at rpg-binary-url" >&2
  exit 2
fi
mkdir -p "$dir"
file="$dir/download"
# Exit 3: nothing to download (the caller may build instead); 2: refused.
curl --fail --silent --show-error --location --retry 3 --output "$file" -- "$url" || {
  echo "rpg: could not download $url" >&2
  exit 3
}
got="$(sha256sum "$file" | cut -d' ' -f1)"
if [[ "$got" != "$want" ]]; then
  echo "::error::rpg: the binary's sha256 is $got, expected $want" >&2
  exit 2
fi
if tar -tzf "$file" >/dev/null 2>&1; then
  tar -xzf "$file" -C "$dir"
  bin="$(find "$dir" -type f -name rpg | head -n 1)"
else
  bin="$dir/rpg"
  mv "$file" "$bin"
fi
[[ -n "$bin" ]] || { echo "::error::rpg: no rpg executable in the download" >&2; exit 2; }
chmod +x "$bin"
echo "RPG_BIN=$bin" >> "$GITHUB_ENV"
