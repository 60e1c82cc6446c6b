#!/usr/bin/env bash
# Fetch the released rpg that matches the action's own ref, checked against
# the release's SHA256SUMS, and put it in DIR. Writes found=true or
# found=false to $GITHUB_OUTPUT: false (the ref is not a release tag, or the
# release has no binary for this runner) means "build from source"; a binary
# whose checksum differs is refused with exit 2, never built around.
# usage: fetch-release.sh OWNER/REPO REF DIR
set -euo pipefail
repo="${1:-}" ref="${2:-}" dir="${3:?DIR}"
base="${RPG_RELEASE_BASE:-${GITHUB_SERVER_URL:-https://github.com}}"

build_instead() {
  echo "rpg: $1; building rpg from source instead" >&2
  echo "found=false" >> "$GITHUB_OUTPUT"
  exit 0
}

[[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || build_instead "the action was not used from a repository"
[[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] \
  || build_instead "the action's ref '$ref' is not a release tag"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
  Darwin-arm64) target=aarch64-apple-darwin ;;
  Darwin-x86_64) target=x86_64-apple-darwin ;;
  *) build_instead "no released rpg for $(uname -s) $(uname -m)" ;;
esac
asset="rpg-$target.tar.gz"
url="$base/$repo/releases/download/$ref"
sums="$(curl --fail --silent --location --retry 3 -- "$url/SHA256SUMS")" \
  || build_instead "release $ref has no SHA256SUMS"
sha="$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1 }' <<<"$sums")"
[[ -n "$sha" ]] || build_instead "release $ref lists no $asset"
status=0
"$(dirname "$0")/fetch-binary.sh" "$url/$asset" "$sha" "$dir" || status=$?
case "$status" in
  0) echo "found=true" >> "$GITHUB_OUTPUT" ;;
  3) build_instead "release $ref has no downloadable $asset" ;;
  *) exit "$status" ;;
esac
