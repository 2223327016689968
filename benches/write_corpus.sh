#!/usr/bin/env bash
# `write` of real agent transcripts against `git notes add -F` of the same file: wall time
# (hyperfine), instructions (callgrind, every process) and peak memory (/usr/bin/time -v), for
# a ~10 KB, a ~100 KB and a ~10 MB transcript (real lines concatenated), at N existing
# checkpoints (benches/fixture.py).
#
# Then target 5 of issue 17: the peak memory and wall time (/usr/bin/time -v) of `write` of a
# transcript of 100 MB or more (the ~10 MB one, or the generated one, repeated), in a fresh
# repository with one commit, on both stores, against `git notes add -F` of the same file and the
# budget (the transcript's size + 64 MiB).
#
# Usage: benches/write_corpus.sh [CORPUS.git] [N...]   (or BENCH_CORPUS=CORPUS.git)
#   CORPUS.git: a bare repository whose entire/checkpoints/v1 branch holds full.jsonl
#   transcripts (shared/corpus/git-sync.git); without one the generated 100 KB transcript of
#   benches/common.sh is used. N defaults to 100.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CORPUS="${1:-${BENCH_CORPUS:-}}"
[ $# -gt 0 ] && shift
SIZES="${*:-100}"
. "$ROOT/benches/common.sh" hyperfine
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
mkdir -p "$WORK/t"
if [ -n "$CORPUS" ]; then
    git -C "$CORPUS" ls-tree -r -l entire/checkpoints/v1 |
        awk '$5 ~ /full\.jsonl$/ && $4 != "BAD" { print $4, $3 }' | sort -n > "$WORK/blobs"
    pick() { # the first present blob of at least $1 bytes
        awk -v min="$1" '$1 >= min { print $2 }' "$WORK/blobs" | while read -r sha; do
            git -C "$CORPUS" cat-file blob "$sha" 2>/dev/null && break
        done
    }
    pick 10000 > "$WORK/t/10k.jsonl"
    pick 100000 > "$WORK/t/100k.jsonl"
    awk '{ print $2 }' "$WORK/blobs" | tac | while read -r sha; do
        git -C "$CORPUS" cat-file blob "$sha" 2>/dev/null || true
    done | head -c 10500000 | sed '$d' > "$WORK/t/10m.jsonl"
else
    cp "$T" "$WORK/t/100k.jsonl"
fi
ls -l "$WORK/t"
count() {
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null "$@" \
        2>&1 >/dev/null | awk '/I +refs:/ { gsub(",", "", $NF); s += $NF } END { print s }'
}
peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident/ { print $NF }'; }
for N in $SIZES; do
    R="$WORK/fx$N"
    python3 "$ROOT/benches/fixture.py" "$R" --count "$N" --store git-refs >/dev/null
    cd "$R"
    for t in "$WORK"/t/*.jsonl; do
        name="$(basename "$t" .jsonl)"
        ours="git-entire-checkpoint write -q --session s --transcript $t --prompt p"
        notes="git notes add -f -F $t HEAD"
        hyperfine -N --warmup 2 --runs 20 --style none --export-json "$WORK/run.json" \
            -n write "$ours" -n notes-add "$notes" >/dev/null
        python3 - "$WORK/run.json" "$N" "$name" "$(count $ours)" "$(count $notes)" \
            "$(peak $ours)" "$(peak $notes)" <<'PY'
import json, sys
run, n, name, iw, ig, mw, mg = sys.argv[1:]
r = {x["command"]: x for x in json.load(open(run))["results"]}
w, g = r["write"]["median"] * 1e3, r["notes-add"]["median"] * 1e3
print(f"N={n} {name}: write {w:.2f} ms / notes {g:.2f} ms = {w / g:.2f}; "
      f"instructions {int(iw) / 1e6:.1f} M / {int(ig) / 1e6:.1f} M = {int(iw) / int(ig):.2f}; "
      f"peak RSS {int(mw) / 1024:.1f} / {int(mg) / 1024:.1f} MB")
PY
    done
    cd "$ROOT"
    rm -rf "$R"
done

big="$WORK/t/100m.jsonl"
src="$WORK/t/10m.jsonl"
[ -s "$src" ] || src="$T"
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
