#!/usr/bin/env bash
# A commit with many `Entire-Checkpoint:` trailers the remote lacks (issue 55, item 4b: `show
# HEAD` fetched once per trailer, 35 s at 1,000 and 158 s at 4,000 over file://): wall time of
# `show HEAD`, `log HEAD` and `git entire-fetch --for HEAD` in a clone, the remote holding K of
# the N linked checkpoints. Reads take the first 256 trailers of a message and fetch the missing
# ones in one batch, so the time stays that of a few fetches whatever N is (target: under 2 s).
# Usage: benches/many_trailers.sh [N] [K]   (defaults 4000 and 20)
#        benches/many_trailers.sh --smoke   (N = 300, K = 3, debug binaries: that it runs)
set -euo pipefail
N=4000
K=20
if [ "${1:-}" = --smoke ]; then
    N=300 K=3
    export BENCH_PROFILE=debug
else
    N="${1:-$N}" K="${2:-$K}"
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
cd "$WORK"
git init -q -b main w
cd w
git commit -q --allow-empty -m init
for _ in $(seq "$K"); do
    echo "Entire-Checkpoint: $(git entire-checkpoint write -q --session s --transcript "$T")"
done > "$WORK/message"
python3 - "$N" "$K" >> "$WORK/message" <<'PY'
import sys
n, k = int(sys.argv[1]), int(sys.argv[2])
for i in range(n - k):
    print(f"Entire-Checkpoint: 01KVBJCWYA4YW6J5M9G{i:07d}")
PY
git commit -q --allow-empty -F "$WORK/message"
git init -q --bare -b main "$WORK/origin.git"
git push -q "$WORK/origin.git" main 'refs/entire/checkpoints/*:refs/entire/checkpoints/*'
git clone -q "file://$WORK/origin.git" "$WORK/clone"
cd "$WORK/clone"
# Runs "$@" (its exit code aside: `log` of a commit linking several checkpoints is a usage
# error) and prints its wall time.
timed() {
    local start=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || true
    awk -v a="$start" -v b="$EPOCHREALTIME" -v c="$*" 'BEGIN { printf "%-40s %8.2f s\n", c, b - a }'
}
echo "N = $N trailers, K = $K on the remote, file://"
timed git entire-checkpoint show HEAD
timed git entire-checkpoint log HEAD
timed git entire-fetch --for HEAD
