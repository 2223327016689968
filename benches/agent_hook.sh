#!/usr/bin/env bash
# What an agent waits for when our hook runs (docs/agents.md): `agent-hook claude-code
# PostToolUse` (the typical event: it only notes that the session is active) and `agent-hook
# claude-code Stop` with a 10 MB transcript (it reads, redacts and stages the transcript), each
# against `true` with the same stdin, in paired rounds (benches/paired.py); then the
# instructions (callgrind) of one run of each.
#
# Usage: benches/agent_hook.sh [--smoke]   RUNS (default 20) paired rounds; --smoke: 3 rounds of
# the debug build and a 1 MB transcript, no instruction counts (what .ci/run executes).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SMOKE=
[ "${1:-}" = --smoke ] && SMOKE=1
if [ -n "$SMOKE" ]; then
    RUNS=3
    export BENCH_PROFILE="${BENCH_PROFILE:-debug}"
fi
. "$ROOT/benches/common.sh" valgrind
RUNS="${RUNS:-20}"
size=$((10 * 1024 * 1024))
[ -n "$SMOKE" ] && size=$((1024 * 1024))
# A Claude Code transcript of `size` bytes: T's lines as assistant text, a prompt first.
big="$WORK/session.jsonl"
python3 - "$big" "$size" <<'PY'
import json, sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "add the parser"}}) + "\n")
    n = 0
    while f.tell() < size:
        n += 1
        f.write(json.dumps({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "model": "claude-opus-4-7",
            "content": [{"type": "text", "text": "step %d " % n + "y" * 400}],
            "usage": {"input_tokens": 3, "output_tokens": 8}}}) + "\n")
PY
git init -q -b main "$WORK/repo"
git -C "$WORK/repo" commit -q --allow-empty -m init
payload="$WORK/payload.json"
printf '{"session_id": "s-1", "transcript_path": "%s", "cwd": "%s", "hook_event_name": "x"}' \
    "$big" "$WORK/repo" > "$payload"
hook() { echo "sh -c 'cd $WORK/repo && git-entire-checkpoint agent-hook claude-code $1 < $payload'"; }
baseline="sh -c 'cd $WORK/repo && true < $payload'"
echo "== agent-hook claude-code PostToolUse (notes the session) against true"
python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 2 \
    true="$baseline" PostToolUse="$(hook PostToolUse)"
echo "== agent-hook claude-code Stop, a $(stat -c %s "$big")-byte transcript (read, redacted, staged) against true"
python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 1 \
    true="$baseline" Stop="$(hook Stop)"
[ -n "$SMOKE" ] && exit 0
echo "== instructions (millions): true / PostToolUse / Stop"
cd "$WORK/repo"
printf '  %.1f / %.1f / %.1f\n' \
    "$(instructions sh -c "true < $payload" | awk '{ print $1 / 1e6 }')" \
    "$(instructions sh -c "git-entire-checkpoint agent-hook claude-code PostToolUse < $payload" | awk '{ print $1 / 1e6 }')" \
    "$(instructions sh -c "git-entire-checkpoint agent-hook claude-code Stop < $payload" | awk '{ print $1 / 1e6 }')"
