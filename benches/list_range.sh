#!/usr/bin/env bash
# `list <revision-range>` benchmark (issue 19): a range of N commits (default 500), each linking
# one of N git-refs checkpoints through its Entire-Checkpoint trailer, all local, against
# `git log --format=%(trailers)` of the same range, in paired rounds (benches/paired.py: the
# ratio quoted is the median of the per-round ratios). Target: ratio <= 2.
# Usage: benches/list_range.sh [--smoke] [N] [RUNS]   (defaults 500, 40; --smoke: 30 commits,
# 3 rounds, debug binaries: checks that it runs, its ratios mean nothing). Builds the binaries.
set -euo pipefail
if [ "${1:-}" = --smoke ]; then
    set -- 30 3
    export BENCH_PROFILE=debug
fi
N="${1:-500}"
RUNS="${2:-40}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
R="$WORK/repo"
python3 "$ROOT/benches/fixture.py" "$R" --count "$N" --store git-refs --packed
cd "$R"
git commit -q --allow-empty -m base
git branch base
# N commits on main, the i-th linking the i-th checkpoint, in one fast-import stream.
python3 - "$R/.git/bench-ids-git-refs.txt" "$(git rev-parse HEAD)" <<'PY' | git fast-import --quiet
import sys
ids = open(sys.argv[1]).read().split()
out = sys.stdout
for i, cid in enumerate(ids):
    msg = f"change {i}\n\nsome body text\n\nEntire-Checkpoint: {cid}\n".encode()
    out.write("commit refs/heads/main\n")
    out.write(f"committer Bench <bench@example.invalid> {1767225600 + i} +0000\n")
    out.write(f"data {len(msg)}\n"); out.flush(); sys.stdout.buffer.write(msg); out.write("\n")
    if i == 0:
        out.write(f"from {sys.argv[2]}\n")
    out.write("\n")
PY
git reset -q --hard main
# The listing is what is measured: every commit linked, every checkpoint found, nothing fetched.
linked="$(git-entire-checkpoint list --no-fetch --json base..main | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert all(cp["found"] for c in d["commits"] for cp in c["checkpoints"]), "a checkpoint is missing"
print(len(d["commits"]))')"
[ "$linked" = "$N" ] || { echo "list base..main listed $linked commits, not $N" >&2; exit 1; }

echo "== list <range> over $N linked commits, checkpoints local"
python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 3 --n "$N" \
    "git-log-trailers=git log --format=%(trailers) base..main" \
    "list-range=git-entire-checkpoint list --no-fetch base..main" \
    "list-range-json=git-entire-checkpoint list --no-fetch --json base..main"
