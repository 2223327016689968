#!/usr/bin/env bash
# `write` of real agent transcripts (the binary, as the hooks run it) against `git notes add -F`
# of the same file: wall time (benches/paired.py: paired rounds, the median of the per-round
# ratios), instructions (callgrind, every process) and peak memory (/usr/bin/time -v), for real
# transcripts of ~10 KB, ~100 KB and ~10 MB made of different real sessions
# (benches/corpus_transcripts.py), at N existing checkpoints (benches/fixture.py).
#
# Then the peak memory and wall time (/usr/bin/time -v) of `write` of a real ~100 MB transcript
# (every session of the corpus whole), in a fresh repository with one commit, on both stores,
# against `git notes add -F` of the same file and the budget (the transcript's size + 64 MiB).
#
# Usage: benches/write_corpus.sh [CORPUS] [N...]   (or BENCH_CORPUS=CORPUS)
#   CORPUS: a bare repository holding checkpoint data, or a folder of them (the shared corpus);
#   without one the generated 100 KB transcript of benches/common.sh is used (and repeated to
#   100 MB). N defaults to 100. RUNS (default 20) paired rounds.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CORPUS="${1:-${BENCH_CORPUS:-}}"
[ $# -gt 0 ] && shift
SIZES="${*:-100}"
. "$ROOT/benches/common.sh" valgrind
mkdir -p "$WORK/t"
RUNS="${RUNS:-20}"
if [ -n "$CORPUS" ]; then
    python3 "$ROOT/benches/corpus_transcripts.py" "$CORPUS" "$WORK/t" \
        10k=10000 100k=100000 10m=10000000 100m=100000000
    mv "$WORK/t/100m.jsonl" "$WORK/100m.jsonl"
else
    cp "$T" "$WORK/t/100k.jsonl"
fi
ls -l "$WORK/t"
peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident/ { print $NF }'; }
for N in $SIZES; do
    R="$WORK/fx$N"
    python3 "$ROOT/benches/fixture.py" "$R" --count "$N" --store git-refs >/dev/null
    cd "$R"
    for t in "$WORK"/t/*.jsonl; do
        name="$(basename "$t" .jsonl)"
        ours="git-entire-checkpoint write -q --session s --transcript $t --prompt p"
        notes="git notes add -f -F $t HEAD"
        python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 2 --tsv "$WORK/run.tsv" \
            notes-add="$notes" write="$ours" >/dev/null
        python3 - "$WORK/run.tsv" "$N" "$name" "$(instructions $ours)" "$(instructions $notes)" \
            "$(peak $ours)" "$(peak $notes)" "$(stat -c %s "$t")" <<'PY'
import sys
run, n, name, iw, ig, mw, mg, size = sys.argv[1:]
row = open(run).read().splitlines()[-1].split("\t")
w, g, ratio = float(row[2]) * 1e3, float(row[4]) * 1e3, float(row[5])
print(f"N={n} {name} ({int(size) / 1e3:.0f} KB): write {w:.2f} ms / notes {g:.2f} ms = {ratio:.2f}; "
      f"instructions {int(iw) / 1e6:.1f} M / {int(ig) / 1e6:.1f} M = {int(iw) / int(ig):.2f}; "
      f"peak RSS {int(mw) / 1024:.1f} / {int(mg) / 1024:.1f} MB")
PY
    done
    cd "$ROOT"
    rm -rf "$R"
done

big="$WORK/100m.jsonl"
src="$T"
while [ "$(stat -c %s "$big" 2>/dev/null || echo 0)" -lt 100000000 ]; do cat "$src" >> "$big"; done
R="$WORK/memory"
git init -q "$R"
git -C "$R" commit -q --allow-empty -m init
cd "$R"
measure() { # peak RSS in KiB and wall time of one run
    /usr/bin/time -v "$@" 2>&1 >/dev/null |
        awk '/Maximum resident/ { kb = $NF } /Elapsed/ { t = $NF } END { print kb, t }'
}
size=$(stat -c %s "$big")
for store in git-refs git-branch; do
    read -r kb t <<<"$(ENTIRE_CHECKPOINTS_PRIMARY=$store measure \
        git-entire-checkpoint write -q --session s --transcript "$big")"
    echo "memory $store write of $((size / 1000000)) MB: peak RSS $((kb / 1024)) MiB" \
        "(budget $(((size / 1024 + 65536) / 1024)) MiB), $t"
done
read -r kb t <<<"$(measure git notes add -f -F "$big" HEAD)"
echo "memory git notes add -F of $((size / 1000000)) MB: peak RSS $((kb / 1024)) MiB, $t"
cd "$ROOT"
