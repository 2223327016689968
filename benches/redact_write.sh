#!/usr/bin/env bash
# Instructions (callgrind) of `write` of real transcripts, each a fresh blob (a unique line
# appended, as a hook's transcript always changes), beside `git notes add -F` of the same file,
# and the share of redaction (`Redactor::redact_vec`, inclusive) in the write.
#
# Usage: benches/redact_write.sh BINARY TRANSCRIPT...
#   BINARY: a release `git-entire-checkpoint` (built with debug symbols or not: callgrind names
#   the function either way unless it is stripped).
set -euo pipefail
BIN="$1"
shift
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
total() { awk '/I +refs:/ { gsub(",", "", $NF); s += $NF } END { printf "%.0f\n", s }'; }
for t in "$@"; do
    for who in write notes; do
        rm -rf "$WORK/r"
        git init -q -b main "$WORK/r"
        git -C "$WORK/r" -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
        fresh="$WORK/fresh.jsonl"
        cp "$t" "$fresh"
        printf '{"type":"bench","run":"%s-%s"}\n' "$who" "$(date +%s%N)" >> "$fresh"
        if [ "$who" = write ]; then
            (cd "$WORK/r" && valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" \
                "$BIN" write -q --session s --transcript "$fresh" --prompt p) 2>"$WORK/err" >/dev/null
            w=$(total < "$WORK/err")
            r=$(callgrind_annotate --inclusive=yes "$WORK/cg.out" 2>/dev/null \
                | awk '/Redactor::redact_vec/ && !r { gsub(",", "", $1); r = $1 } END { print r }')
        else
            (cd "$WORK/r" && valgrind --tool=callgrind --trace-children=yes \
                --callgrind-out-file=/dev/null git -c user.name=b -c user.email=b@b \
                notes add -F "$fresh" HEAD) 2>"$WORK/err" >/dev/null
            g=$(total < "$WORK/err")
        fi
    done
    printf '%s\t%d bytes\twrite %.2f M\tredaction %.2f M (%.0f%%)\tgit notes %.2f M\tratio %.2f\n' \
        "$(basename "$t")" "$(stat -c %s "$t")" "$(echo "$w/1000000" | bc -l)" \
        "$(echo "${r:-0}/1000000" | bc -l)" "$(echo "100*${r:-0}/$w" | bc -l)" \
        "$(echo "$g/1000000" | bc -l)" "$(echo "$w/$g" | bc -l)"
done
