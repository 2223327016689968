#!/usr/bin/env bash
# blame benchmark: `git entire-checkpoint blame` of a 600-line Go file whose checkpoints are
# local vs `git blame --line-porcelain` of the same file (what the reference builds on), in
# paired rounds (benches/paired.py: each round runs every command once, and the ratio quoted is
# the median of the per-round ratios). The file grows over COMMITS commits of 600/COMMITS lines
# each; every other commit links a checkpoint whose Claude Code transcript (about TRANSCRIPT_KB
# KB: prompts, reads with large tool results, and the Edit that wrote the commit's lines) is
# what blame reads.
# Usage: benches/blame.sh [--smoke] [COMMITS] [TRANSCRIPT_KB] [RUNS]   (default 60 commits,
# 200 KB, 40 rounds; --smoke: 6 commits, 20 KB, 3 rounds, debug binaries: checks that it runs,
# its ratios mean nothing). Builds the binaries.
set -euo pipefail
if [ "${1:-}" = --smoke ]; then
    set -- 6 20 3
    export BENCH_PROFILE=debug
fi
COMMITS="${1:-60}"
KB="${2:-200}"
RUNS="${3:-40}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
cd "$WORK"
git init -q -b main repo
cd repo
python3 - "$COMMITS" "$KB" <<'EOF'
import json, os, subprocess, sys
commits, kb = int(sys.argv[1]), int(sys.argv[2])
per = 600 // commits
lines = []
filler = json.dumps({"type": "user", "message": {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_x", "content": "\n".join(
        f"// context line {i} of a file the agent read" for i in range(60))}]},
    "timestamp": "2026-01-01T10:00:01Z"})
for c in range(commits):
    new = [f"\tvalue{c}_{i} := compute(\"{c}\", {i}) // step {i}" for i in range(per)]
    lines += new
    with open("big.go", "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["git", "add", "big.go"], check=True)
    message = f"step {c}"
    if c % 2 == 0:
        entries = [json.dumps({"type": "user", "message": {"role": "user", "content": f"write step {c}"},
                               "timestamp": "2026-01-01T10:00:00Z"})]
        while sum(len(e) for e in entries) < kb * 1024:
            entries.append(filler)
        entries.append(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{c}", "name": "Edit", "input": {
                "file_path": "/home/dev/repo/big.go", "old_string": "x", "new_string": "\n".join(new)}}]},
            "timestamp": "2026-01-01T10:00:02Z"}))
        with open("../t.jsonl", "w") as f:
            f.write("\n".join(entries) + "\n")
        cp = subprocess.run(["git-entire-checkpoint", "write", "--session", f"s{c}",
                             "--transcript", "../t.jsonl", "--agent", "Claude Code"],
                            check=True, capture_output=True, text=True).stdout.strip()
        message += f"\n\nEntire-Checkpoint: {cp}"
    subprocess.run(["git", "commit", "-q", "-m", message], check=True)
EOF
wc -l big.go
git entire-checkpoint blame big.go --no-fetch --json | python3 -c "
import json, sys; d = json.load(sys.stdin); print('labels:', d['counts'], 'checkpoints:', len(d['checkpoints']))"
# warm: the writes cache as the writes filled it (the first blame after a write, and every
# repeated one); cold: the cache removed before every run (checkpoints that arrived without a
# fill: a git clone, or a fetch past its budget). `git blame --porcelain`
# (what our blame runs) is shown for reference.
python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 2 \
    --prepare "cold=rm -rf .git/entire/writes-cache" \
    "git-blame-line-porcelain=git blame --line-porcelain big.go" \
    "git-blame-porcelain=git blame --porcelain big.go" \
    "blame-warm=git-entire-checkpoint blame --no-fetch big.go" \
    "cold=git-entire-checkpoint blame --no-fetch big.go"
