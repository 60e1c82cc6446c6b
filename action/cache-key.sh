#!/usr/bin/env bash
# The build cache key for the rpg checkout at DIR, written to $GITHUB_OUTPUT.
# hashFiles() only sees the caller's workspace, never the action's own
# directory, so the key is computed here from rpg's Cargo.lock.
# usage: cache-key.sh DIR
set -euo pipefail
dir="${1:?DIR}"
lock="$dir/Cargo.lock"
[[ -f "$lock" ]] || { echo "::error::rpg: no Cargo.lock in $dir" >&2; exit 2; }
sum="$(sha256sum "$lock" | cut -d' ' -f1)"
echo "key=rpg-${RUNNER_OS:-unknown}-$sum" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT}"
