#!/usr/bin/env bash
# False positives of redaction on the real transcripts of the corpus: every distinct transcript
# of its repositories written through the binary; nothing replaced may be a code identifier, a
# hex hash or commit ID, or a UUID (tests/redaction_false_positives.py).
#
#   tests/redaction_false_positives.sh [DIR [BEFORE_BINARY]]   DIR: ../shared/corpus by default
#
# With BEFORE_BINARY (an earlier build of git-entire-checkpoint), counts only what this build
# replaces and that one did not. Uses detect-secrets' venv of tests/secrets_oracle.sh (it
# installs it) for the helpers both share. Exit 1 on any false positive.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/../shared/corpus}"
venv=${ENTIRE_DETECT_SECRETS_VENV:-$HOME/.cache/entire-checkpoints/detect-secrets}
cargo build --locked --quiet --bin git-entire-checkpoint --manifest-path "$root/Cargo.toml"
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A writable copy in which each repository has its refs/ (see tests/corpus.sh).
cp -r "$dir" "$work/corpus"
chmod -R u+w "$work/corpus"
for repo in "$work/corpus"/*.git; do
    mkdir -p "$repo/refs/heads" "$repo/refs/tags"
done
"$venv/bin/python" "$root/tests/redaction_false_positives.py" "$target/debug/git-entire-checkpoint" \
    "$work/corpus" ${2:+"$2"}
