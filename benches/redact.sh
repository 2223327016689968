#!/usr/bin/env bash
# Redaction benchmark: `git entire-checkpoint write` of a large agent transcript with redaction
# on (the built-in rules) vs the same write with redaction off, both measured in the same run.
# The transcript is JSONL with escaped newlines, nested JSON in strings and one secret every
# 500 lines, like a long agent session.
# Usage: benches/redact.sh [LINES]   (default 100000, about 30 MB). Builds release binaries.
set -euo pipefail
LINES="${1:-100000}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" hyperfine
cd "$WORK"
awk -v n="$LINES" 'BEGIN {
  for (i = 0; i < n; i++) {
    if (i % 500 == 0)
      printf "{\"type\":\"tool_result\",\"content\":\"$ cat .env\\nGITHUB_TOKEN=ghp_%036d\\n{\\\"api_key\\\": \\\"k%d\\\"}\"}\n", i, i
    else if (i % 3 == 0)
      printf "{\"type\":\"tool_result\",\"content\":\"fn step_%d(token_count: usize) -> bool {\\n    let id = \\\"123e4567-e89b-12d3-a456-%012d\\\";\\n    commit 9fceb02d0ae598e95dc970b74767f19372d61af8\\n}\"}\n", i, i
    else
      printf "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Step %d: I read src/auth/token_store.rs and the password_hash column; the tests pass.\"}]},\"usage\":{\"input_tokens\":%d,\"output_tokens\":42}}\n", i, i
  }
}' > t.jsonl
ls -l t.jsonl | awk '{ printf "transcript: %d lines, %.1f MB\n", '"$LINES"', $5 / 1e6 }'
for mode in on off; do
  git init -q -b main "$mode"
  git -C "$mode" commit -q --allow-empty -m init
done
mkdir -p off/.entire
printf '{"redaction": {"enabled": false}}\n' > off/.entire/settings.local.json
hyperfine --warmup 1 --runs 5 \
  -n "write, redaction on" "git -C on entire-checkpoint write --session s --transcript ../t.jsonl" \
  -n "write, redaction off" "git -C off entire-checkpoint write --session s --transcript ../t.jsonl"
id="$(git -C on entire-checkpoint write --session s --transcript ../t.jsonl)"
git -C on entire-checkpoint show "$id" --json 2>/dev/null | grep -o '"redactions": *[0-9]*' | head -1 || true
