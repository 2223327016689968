#!/usr/bin/env bash
# What git itself pays for the objects a checkpoint stores beyond those of `git notes add`,
# beside our write, in one run (benches/paired.py: the commands in turn, round after round,
# fresh objects in every round).
#
# `git notes add -F` of a transcript stores three objects (its blob, a tree, a commit) and moves
# a ref. A checkpoint write of the same transcript stores seven, in the layout the reference
# reads: the transcript, the session's and the checkpoint's metadata.json, the content hash, two
# trees and the commit (the prompt, unchanged, is found). Each is a file of its own, made as git
# makes one. `git hash-object -w` of seven fresh files against three, in repositories as young as
# the write's, is git's own price for four objects more; against `git notes add` plus that price,
# the write's ratio is what is ours beyond the objects the format asks for (docs/performance.md,
# "Issue 52 (Performance IV): statically linked").
#
# Usage: benches/write_floor.sh [--smoke] [--corpus DIR]
#   --corpus DIR  the transcripts are made of the real sessions of the corpus of checkpoint data
#   --smoke       3 rounds, debug binaries: checks that it runs (the figures mean nothing)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS=60
CORPUS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) RUNS=3; export BENCH_PROFILE=debug ;;
        --corpus) CORPUS="$(cd "$2" && pwd)"; shift ;;
        *) echo "usage: benches/write_floor.sh [--smoke] [--corpus DIR]" >&2; exit 2 ;;
    esac
    shift
done
. "$ROOT/benches/common.sh" python3

# `$WORK/fresh_files DIR N` writes N small files no run wrote before into DIR (f1 to fN), the
# files `files DIR N` lists.
cat > "$WORK/fresh_files" <<'SH'
#!/bin/sh
for i in $(seq "$2"); do printf 'object %s of %s\n' "$i" "$(date +%s%N)" > "$1/f$i"; done
SH
chmod +x "$WORK/fresh_files"
files() { for i in $(seq "$2"); do printf ' %s/f%s' "$1" "$i"; done; }

make_transcripts "$WORK/t" w8k=9000 w100k=102400
printf '%-8s %12s %12s %12s %12s %10s %20s\n' transcript "notes add" "+4 objects" "git, same" ours \
    "ours/notes" "ours/(git, same)"
for name in w8k w100k; do
    for side in git h3 h7 ours; do
        git init -q -b main "$WORK/$name-$side"
        git -C "$WORK/$name-$side" commit -q --allow-empty -m init
        mkdir -p "$WORK/$name-$side.f"
    done
    cp "$WORK/t/$name.jsonl" "$WORK/$name-git.jsonl"
    cp "$WORK/t/$name.jsonl" "$WORK/$name-ours.jsonl"
    cd "$WORK/$name-ours"
    python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 1 --tsv "$WORK/$name.tsv" --n "$name" \
        --prepare "git=$WORK/fresh $WORK/$name-git.jsonl" \
        --prepare "h3=$WORK/fresh_files $WORK/$name-h3.f 3" \
        --prepare "h7=$WORK/fresh_files $WORK/$name-h7.f 7" \
        --prepare "ours=$WORK/fresh $WORK/$name-ours.jsonl" \
        "git=git -C $WORK/$name-git notes add -f -F $WORK/$name-git.jsonl HEAD" \
        "h3=git -C $WORK/$name-h3 hash-object -w$(files "$WORK/$name-h3.f" 3)" \
        "h7=git -C $WORK/$name-h7 hash-object -w$(files "$WORK/$name-h7.f" 7)" \
        "ours=git-entire-checkpoint write -q --session s --transcript $WORK/$name-ours.jsonl --prompt p" >&2
    # paired.py's rows, h3, h7 and ours: the median (column 3) and the baseline's (column 5),
    # in seconds.
    awk -F'\t' -v n="$name" '{ m[NR] = $3; notes = $5 } END {
        more = m[2] - m[1]; same = notes + more
        printf "%-8s %10.2f ms %10.2f ms %10.2f ms %10.2f ms %10.2f %20.2f\n", n, notes * 1e3,
            more * 1e3, same * 1e3, m[3] * 1e3, m[3] / notes, m[3] / same }' "$WORK/$name.tsv"
done
