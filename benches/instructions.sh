#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind, every process of a command summed) of write,
# show and cat against their git baselines, at N existing checkpoints in each store, loose and
# packed. Unlike wall time these do not move with the load of a shared machine, so they show
# whether a cost grows with N.
#
# Usage: benches/instructions.sh [--smoke] [--out DIR]   (installs valgrind through apt-get
# when missing; builds the release binaries)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SIZES="100 10000 100000"
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) SIZES="20" ;;
        --out) OUT="$2"; shift ;;
        *) echo "usage: benches/instructions.sh [--smoke] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
. "$ROOT/benches/common.sh" valgrind
TSV="$WORK/instructions.tsv"
: > "$TSV"

# Appends one row (results.tsv columns) and prints it.
row() {
    local name="$1" n="$2" ours="$3" base="$4" base_ir="$5" target="$6"
    awk -v a="$name" -v n="$n" -v o="$ours" -v b="$base" -v bi="$base_ir" -v t="$target" 'BEGIN {
        printf "%s\t%d\t%d\t0\t%s\t%d\t%.3f\t%s\n", a, n, o, b, bi, o / bi, t
        printf "  N=%6d  %-22s %12d instructions  vs %-22s %12d  ratio %6.2f  (target %s)\n", n, a, o, b, bi, o / bi, t > "/dev/stderr"
    }' >> "$TSV"
}

for N in $SIZES; do
    R="$WORK/fx$N"
    python3 "$ROOT/benches/fixture.py" "$R" --count "$N" --store both
    cd "$R"
    ID="$(sed -n "$((N / 2 + 1))p" .git/bench-ids-git-refs.txt)"
    HEX="$(sed -n "$((N / 2 + 1))p" .git/bench-ids-git-branch.txt)"
    REF="refs/entire/checkpoints/${ID: -2}/$ID"
    for layout in loose packed; do
        [ "$layout" = packed ] && git pack-refs --all
        notes=$(instructions git notes add -f -F "$T" HEAD)
        row "refs-write-$layout" "$N" "$(instructions git-entire-checkpoint write -q --session s --transcript "$T" --prompt p)" \
            notes-add "$notes" "<= 1"
        row "branch-write-$layout" "$N" "$(instructions env ENTIRE_CHECKPOINTS_PRIMARY=git-branch git-entire-checkpoint write -q --session s --transcript "$T" --prompt p)" \
            notes-add "$notes" "(legacy store)"
        catfile=$(instructions git cat-file -p "$REF:metadata.json")
        row "refs-show-$layout" "$N" "$(instructions git-entire-checkpoint show "$ID" --json)" \
            "refs-cat-file-$layout" "$catfile" "<= 2"
        row "refs-cat-$layout" "$N" "$(instructions git-entire-checkpoint cat "$ID" metadata.json)" \
            "refs-cat-file-$layout" "$catfile" "<= 2"
        v1catfile=$(instructions git cat-file -p "entire/checkpoints/v1:${HEX:0:2}/${HEX:2}/metadata.json")
        # The first show after the branch moved walks its history for the author; later ones
        # read the author memo (docs/format.md, "The v1 author memo").
        rm -f .git/entire/branch-authors.json
        row "branch-show-first-$layout" "$N" "$(instructions git-entire-checkpoint show "$HEX" --json)" \
            "branch-cat-file-$layout" "$v1catfile" "(first after a write)"
        row "branch-show-$layout" "$N" "$(instructions git-entire-checkpoint show "$HEX" --json)" \
            "branch-cat-file-$layout" "$v1catfile" "<= 2"
    done
    cd "$ROOT"
    rm -rf "$R"
done
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TSV" "$OUT/instructions.tsv"
    echo "results: $OUT/instructions.tsv"
fi
