#!/usr/bin/env bash
# What the rpg GitHub Action runs, by mode. Called by action.yml; also
# runnable by hand in a checkout with the same environment variables.
#
#   RPG_MODE          update | issue-comment | pr-comment
#   RPG_BIN           the rpg executable (default: rpg on PATH)
#   RPG_TOP_K, RPG_OPT_OUT_LABEL, RPG_LIFTER
#   GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_EVENT_NAME,
#   GITHUB_REF_NAME, GITHUB_API_URL, GITHUB_SERVER_URL   (set by Actions)
#   RPG_BASE_SHA, RPG_HEAD_SHA                          (pr-comment)
#
# Event text (titles, bodies, branch names) never reaches this script's
# words: rpg reads it from GITHUB_EVENT_PATH as data.
set -euo pipefail

rpg="${RPG_BIN:-rpg}"
mode="${RPG_MODE:?RPG_MODE must be update, issue-comment or pr-comment}"

case "${RPG_LIFTER:-offline}" in
  offline) ;;
  *) echo "::error::rpg: lifter '${RPG_LIFTER}' is not available in this version; use 'offline'" >&2
     exit 2 ;;
esac

is_sha() { [[ "$1" =~ ^[0-9a-f]{40}$ ]]; }

# The snapshot commit is authored by the Actions bot unless told otherwise.
commit_snapshot() {
  local name="${RPG_COMMIT_NAME:-github-actions[bot]}"
  local email="${RPG_COMMIT_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}"
  local head
  head="$(git rev-parse HEAD)"
  git add -- .rpg
  if git diff --cached --quiet -- .rpg; then
    echo "rpg: the committed graph is current"
    return 1
  fi
  git -c user.name="$name" -c user.email="$email" \
    commit --quiet -m "rpg: update the planning graph to ${head:0:12}" -- .rpg
}

# Bring .rpg/ to HEAD: adopt the committed snapshot and update it, or
# build the graph when there is none yet.
refresh_snapshot() {
  if [[ -f .rpg/graph.jsonl ]]; then
    "$rpg" update --snapshot
  else
    "$rpg" init
  fi
}

mode_update() {
  if [[ "${GITHUB_EVENT_NAME:-push}" == "push" && -n "${GITHUB_EVENT_PATH:-}" ]]; then
    if ! "$rpg" bot push-check; then
      echo "rpg: nothing to do"
      return 0
    fi
  fi
  local branch="${GITHUB_REF_NAME:?GITHUB_REF_NAME is not set}"
  local attempt
  for attempt in 1 2 3 4 5; do
    refresh_snapshot
    commit_snapshot || return 0
    local base
    base="$(git rev-parse HEAD~1)"
    if git push --quiet origin "HEAD:refs/heads/${branch}"; then
      echo "rpg: pushed the graph for $(git rev-parse --short=12 "$base")"
      return 0
    fi
    # A refusal with the tip unmoved is no race (a protected branch, a
    # read-only token): retrying would only fail four more times.
    if [[ "$(git ls-remote origin "refs/heads/${branch}" | cut -f1)" == "$base" ]]; then
      echo "::error::rpg: the push to '${branch}' was refused and nobody pushed meanwhile; if the branch is protected, let github-actions[bot] push to it or give the action a token that may" >&2
      return 2
    fi
    # Someone pushed meanwhile. A rebased snapshot would describe the
    # wrong commit, so start again from the new tip (the checkout is
    # disposable) and recompute.
    echo "rpg: push rejected (attempt ${attempt}); retrying on the new tip" >&2
    sleep $((attempt * 2))
    git fetch --quiet --depth=1 origin "refs/heads/${branch}"
    git reset --quiet --hard FETCH_HEAD
  done
  echo "::error::rpg: could not push the graph after 5 attempts" >&2
  return 2
}

# locate weighs up the functions the newest commits changed (it looks at
# 400 commits at most); a shallow checkout holds none of them. Fetching
# them costs a few seconds, and without them the ranking still answers.
deepen_history() {
  [[ "$(git rev-parse --is-shallow-repository)" == "true" ]] || return 0
  git fetch --quiet --depth=400 origin "$(git rev-parse HEAD)" \
    || echo "::warning::rpg: could not fetch recent history; ranking without it" >&2
}

mode_issue_comment() {
  deepen_history
  # Catch the graph up with the checkout; an old graph still answers.
  if [[ -f .rpg/graph.jsonl ]]; then
    "$rpg" update >/dev/null || echo "::warning::rpg: could not update the graph; answering from the committed one" >&2
  fi
  "$rpg" bot issue-comment --top-k "${RPG_TOP_K:-5}" --opt-out-label "${RPG_OPT_OUT_LABEL:-rpg-skip}"
}

mode_pr_comment() {
  local base="${RPG_BASE_SHA:-}" head="${RPG_HEAD_SHA:-}"
  if ! is_sha "$base" || ! is_sha "$head"; then
    echo "::error::rpg: pr-comment needs the pull request's base and head commits" >&2
    return 2
  fi
  # A shallow checkout holds neither; fetch just those two commits.
  git fetch --quiet --depth=1 origin "$base" "$head"
  "$rpg" bot pr-comment --opt-out-label "${RPG_OPT_OUT_LABEL:-rpg-skip}"
}

case "$mode" in
  update) mode_update ;;
  issue-comment) mode_issue_comment ;;
  pr-comment) mode_pr_comment ;;
  *) echo "::error::rpg: unknown mode '${mode}' (update, issue-comment or pr-comment)" >&2
     exit 2 ;;
esac
