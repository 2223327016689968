#!/usr/bin/env bash
# Each everyday operation beside git doing the same work, in one run: instructions (valgrind's
# callgrind, every process of a command summed) and wall time (benches/paired.py: the two
# commands in turn, round after round; the ratio is the median of the per-round ratios).
#
# Every write stores a fresh blob on both sides: before each run (and before each counted run)
# a line no earlier run wrote is appended to the transcript, as an agent's hook always brings a
# transcript that changed. With a blob already present git only hashes it, so a write benchmark
# repeating one file would time git's cheapest path against our whole one.
#
# Rows: `write` of transcripts of about 8.8 KB, 100 KB and 13.7 MB against `git notes add -F` of
# the same file; `show --json` of one of N packed checkpoints against `git cat-file -p` of its
# metadata.json; `list --json` of N against `git for-each-ref` of their refs; `blame` of a real
# 1,334-line file, warm and first (the writes cache removed) against `git blame --line-porcelain`
# (only with --corpus); `--version` against `git --version`. `doctor` at 20/200/2,000 branches
# is benches/doctor_branches.sh.
#
# Usage: benches/against_git.sh [--smoke] [--corpus DIR] [--out DIR]
#   --corpus DIR  the corpus of real checkpoint data (its README): the transcripts are made of
#                 its real sessions (benches/corpus_transcripts.py) and the blame rows run on
#                 its git-sync repository; without it the transcripts are generated JSONL and
#                 there are no blame rows
#   --smoke       small sizes, 3 rounds, debug binaries: checks that it runs (ratios mean nothing)
#   --out DIR     keep against_git.tsv (operation, instructions ours and git's, wall ours and
#                 git's, the two ratios)
# Installs valgrind through apt-get when missing; builds the release binaries.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SMOKE=0
CORPUS=""
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) SMOKE=1 ;;
        --corpus) CORPUS="$(cd "$2" && pwd)"; shift ;;
        --out) OUT="$2"; shift ;;
        *) echo "usage: benches/against_git.sh [--smoke] [--corpus DIR] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
if [ "$SMOKE" = 1 ]; then
    SIZES="w8k=9000 w100k=102400"; N=200; RUNS=3; BIG_RUNS=2
    export BENCH_PROFILE=debug
else
    SIZES="w8k=9000 w100k=102400 w13m=13700000"; N=100000; RUNS=20; BIG_RUNS=5
fi
. "$ROOT/benches/common.sh" valgrind
TSV="$WORK/against_git.tsv"
WALL="$WORK/wall.tsv"
printf 'operation\tours_instructions\tgit_instructions\tinstructions_ratio\tours_wall_s\tgit_wall_s\twall_ratio\n' > "$TSV"
: > "$WALL"

# Counts both commands once (after `prepare`, a shell command run before each), times them in
# paired rounds (prepared the same way) and adds the row: row NAME RUNS PREPARE_OURS OURS
# PREPARE_GIT GIT (commands split by the shell's rules, run without one).
row() {
    local name="$1" runs="$2" prep_ours="$3" ours="$4" prep_git="$5" base="$6" oi gi
    eval "$prep_ours"; oi="$(instructions $ours)"
    eval "$prep_git"; gi="$(instructions $base)"
    python3 "$ROOT/benches/paired.py" --runs "$runs" --warmup 1 --tsv "$WALL" --n="$name" \
        --prepare "git=$prep_git" --prepare "ours=$prep_ours" "git=$base" "ours=$ours" >&2
    tail -1 "$WALL" | awk -F'\t' -v n="$name" -v o="$oi" -v g="$gi" 'BEGIN { OFS = "\t" } {
        print n, o, g, sprintf("%.2f", o / g), $3, $5, $6 }' >> "$TSV"
}

# shellcheck disable=SC2086
make_transcripts "$WORK/t" $SIZES

for s in $SIZES; do
    name="${s%%=*}"
    for side in ours git; do
        git init -q -b main "$WORK/$name-$side"
        git -C "$WORK/$name-$side" commit -q --allow-empty -m init
        cp "$WORK/t/$name.jsonl" "$WORK/$name-$side.jsonl"
    done
    runs=$RUNS
    [ "$name" = w13m ] && runs=$BIG_RUNS
    # Our binary run as the hook runner runs it (not through git's dispatcher, which `git
    # entire-checkpoint` would add): from the repository.
    cd "$WORK/$name-ours"
    row "write $(( $(wc -c < "$WORK/t/$name.jsonl") / 1024 )) KB" "$runs" \
        "$WORK/fresh $WORK/$name-ours.jsonl" \
        "git-entire-checkpoint write -q --session s --transcript $WORK/$name-ours.jsonl --prompt p" \
        "$WORK/fresh $WORK/$name-git.jsonl" \
        "git -C $WORK/$name-git notes add -f -F $WORK/$name-git.jsonl HEAD"
done

python3 "$ROOT/benches/fixture.py" "$WORK/fx" --count "$N" --store git-refs --packed >&2
cd "$WORK/fx"
ID="$(sed -n "$((N / 2 + 1))p" .git/bench-ids-git-refs.txt)"
git entire-checkpoint list -q > /dev/null # the summary index, as any earlier listing leaves it
row "show --json, 1 of $N packed" "$RUNS" : "git-entire-checkpoint show $ID --json" \
    : "git cat-file -p $(ref_of "$ID"):metadata.json"
row "list --json, $N" "$RUNS" : "git-entire-checkpoint list --json" \
    : "git for-each-ref refs/entire/checkpoints/"
row "--version" "$RUNS" : "git-entire-checkpoint --version" : "git --version"

if [ -n "$CORPUS" ] && [ "$SMOKE" = 0 ]; then
    # A clone of the corpus's git-sync repository with its checkpoints (benches/blame_corpus.py
    # reads the same), its largest non-test Go file blamed.
    git clone -q "$CORPUS/git-sync.git" "$WORK/git-sync"
    cd "$WORK/git-sync"
    git fetch -q origin 'refs/entire/*:refs/entire/*' \
        '+refs/heads/entire/checkpoints/v1:refs/heads/entire/checkpoints/v1'
    F=internal/syncer/syncer.go
    git entire-checkpoint blame --no-fetch "$F" > /dev/null # fills the writes cache
    row "blame, warm, $(wc -l < "$F")-line file" "$RUNS" : \
        "git-entire-checkpoint blame --no-fetch $F" : "git blame --line-porcelain $F"
    row "blame, first (no writes cache)" "$RUNS" "rm -rf .git/entire/writes-cache" \
        "git-entire-checkpoint blame --no-fetch $F" : "git blame --line-porcelain $F"
fi

echo
column -t -s "$(printf '\t')" "$TSV"
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TSV" "$OUT/against_git.tsv"
    echo "results: $OUT/against_git.tsv"
fi
