#!/usr/bin/env bash
# Whole-process benchmarks against git itself (issue 8, and the push/fetch scale part of issue 9).
# Every figure is a ratio to a git baseline timed by the same hyperfine run, on fixtures made by
# benches/fixture.py (N checkpoints in the exact format, loose then packed refs, both stores).
#
# Usage: benches/compare.sh [--smoke] [--out DIR] [--only "SECTION..."]
#   --smoke    tiny N and few runs, debug binaries (well under a minute): checks that every
#              benchmark runs; its ratios mean nothing
#   --out DIR  keep results.tsv (one row per ratio, read by benches/plot.py) in DIR
#   --only     run only these sections: sizes list push-batch fetch push-queued advertisement
# Installs hyperfine through apt-get when missing; builds the release binaries.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SMOKE=0
OUT=""
ONLY=""
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) SMOKE=1 ;;
        --out) OUT="$2"; shift ;;
        --only) ONLY="$2"; shift ;;
        *) echo "usage: benches/compare.sh [--smoke] [--out DIR] [--only \"SECTION...\"]" >&2; exit 2 ;;
    esac
    shift
done
if [ "$SMOKE" = 1 ]; then
    SIZES="20 200"; MID=50; BIG=200; PUSHN=30; BATCH=20; RUNS=3; HEAVY=2; WARM=1
    BENCH_PROFILE=debug
else
    SIZES="100 10000 100000"; MID=10000; BIG=100000; PUSHN=1000; BATCH=200; RUNS=20; HEAVY=5; WARM=3
fi
. "$ROOT/benches/common.sh" hyperfine
TSV="$WORK/results.tsv"
: > "$TSV"
FIXTURE="$ROOT/benches/fixture.py"
RATIOS="$ROOT/benches/ratios.py"
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }
hf() { hyperfine -N --style none --export-json "$WORK/run.json" "$@" >/dev/null; }
ratios() { python3 "$RATIOS" "$TSV" "$WORK/run.json" "$@"; }
nth_id() { sed -n "$(( $(wc -l < "$1") / 2 + 1 ))p" "$1"; }

# Checks a fixture with our own reader and with git: N checkpoint refs, and one checkpoint's
# metadata.json naming its own ID through `show` and through `git cat-file`.
verify_fixture() {
    local repo="$1" n="$2" id
    id="$(nth_id "$repo/.git/bench-ids-git-refs.txt")"
    [ "$(git -C "$repo" for-each-ref refs/entire/checkpoints/ | wc -l)" -ge "$n" ]
    git -C "$repo" cat-file -p "$(ref_of "$id"):metadata.json" | grep -q "\"checkpoint_id\": \"$id\""
    env -C "$repo" git-entire-checkpoint show "$id" --json | grep -q "\"checkpoint_id\": \"$id\""
}

# The objects of one write of the transcript, for the plumbing baseline.
write_objects_of_one_checkpoint

want sizes && echo "== write (100 KB transcript) and reads, against N existing checkpoints in each store"
want sizes && for N in $SIZES; do
    R="$WORK/fx$N"
    python3 "$FIXTURE" "$R" --count "$N" --store both
    verify_fixture "$R" "$N"
    cd "$R"
    hf --warmup "$WARM" --runs "$RUNS" \
        -n refs-write "git-entire-checkpoint write -q --session s --transcript $T --prompt p" \
        -n branch-write "env ENTIRE_CHECKPOINTS_PRIMARY=git-branch git-entire-checkpoint write -q --session s --transcript $T --prompt p" \
        -n notes-add "git notes add -f -F $T HEAD" \
        -n plumbing-write "bash $ROOT/benches/plumbing_write.sh $WORK/objs"
    ratios "$N" "refs-write|notes-add|<= 1" "refs-write|plumbing-write|<= 0.25" \
        "branch-write|notes-add|(legacy store)" "branch-write|plumbing-write|(legacy store)"
    ID="$(nth_id .git/bench-ids-git-refs.txt)"
    HEX="$(nth_id .git/bench-ids-git-branch.txt)"
    for layout in loose packed; do
        [ "$layout" = packed ] && git pack-refs --all
        hf --warmup "$WARM" --runs "$RUNS" \
            -n "refs-show-$layout" "git-entire-checkpoint show $ID --json" \
            -n "refs-cat-$layout" "git-entire-checkpoint cat $ID metadata.json" \
            -n "refs-cat-file-$layout" "git cat-file -p $(ref_of "$ID"):metadata.json" \
            -n "branch-show-$layout" "git-entire-checkpoint show $HEX --json" \
            -n "branch-cat-file-$layout" "git cat-file -p entire/checkpoints/v1:${HEX:0:2}/${HEX:2}/metadata.json"
        ratios "$N" "refs-show-$layout|refs-cat-file-$layout|<= 2" \
            "refs-cat-$layout|refs-cat-file-$layout|<= 2" \
            "branch-show-$layout|branch-cat-file-$layout|<= 2"
    done
    cd "$ROOT"
    rm -rf "$R"
done

echo "== $BIG checkpoint refs (packed), with a bare remote holding them"
NET="$WORK/net"
python3 "$FIXTURE" "$NET" --count "$BIG" --store git-refs --packed --remote "$WORK/net-remote.git"
verify_fixture "$NET" "$BIG"
git -C "$NET" remote add origin "$WORK/net-remote.git"
cd "$NET"
if want list; then
    hf --warmup 1 --runs "$HEAVY" -n list "git-entire-checkpoint list --json" \
        -n for-each-ref "git for-each-ref refs/entire/checkpoints/"
    ratios "$BIG" "list|for-each-ref|<= 2"
    # Peak memory of one run of each side (the target is 64 MiB for the whole list process).
    peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {printf "%.1f MiB", $2 / 1024}'; }
    echo "list peak RSS: $(peak git-entire-checkpoint list --json) (<= 64 MiB); for-each-ref: $(peak git for-each-ref refs/entire/checkpoints/)"
    [ "$(git-entire-checkpoint list --json | grep -c '"checkpoint_id"')" -ge "$BIG" ]
    hf --warmup 20 --runs 200 -n prepush-empty "git-entire-prepush origin $WORK/net-remote.git" -n noop true
    ratios "$BIG" "prepush-empty|noop|within 5 ms"
fi

if want push-batch; then
echo "== push $BATCH queued refs from the repository holding $BIG checkpoint refs"
# The remote holds every other checkpoint and is a destination the repository already knows
# (a first push to a remote sends all it lacks); each run removes the queued refs from it again.
head -n "$BATCH" .git/bench-ids-git-refs.txt | while read -r id; do ref_of "$id"; done > "$WORK/batch-refs"
sed 's/.*/{"ref":"&"}/' "$WORK/batch-refs" > "$WORK/queue-batch"
sed 's/^/delete /' "$WORK/batch-refs" > "$WORK/delete-batch"
git clone -q --mirror "$NET" "$WORK/push-remote.git"
git -C "$WORK/push-remote.git" update-ref --stdin < "$WORK/delete-batch"
git remote add pushto "$WORK/push-remote.git"
git-entire-checkpoint push -q pushto
[ "$(git -C "$WORK/push-remote.git" for-each-ref refs/entire | wc -l)" -ge "$BIG" ]
# The baseline: the same refs pushed by plain git from a repository holding only them.
git init -q --bare "$WORK/only-batch.git"
sed 's/.*/&:&/' "$WORK/batch-refs" | xargs git push -q "$WORK/only-batch.git"
git -C "$WORK/only-batch.git" remote add pushto "$WORK/push-remote.git"
reset_remote="git -C $WORK/push-remote.git update-ref --stdin < $WORK/delete-batch && cp $WORK/queue-batch $NET/.git/entire-checkpoint-push-queue.jsonl"
hf --runs "$HEAVY" --prepare "bash -c '$reset_remote'" -n push-batch-big "git-entire-checkpoint push pushto" \
    -n git-push-batch-alone "git -C $WORK/only-batch.git push -q pushto refs/entire/checkpoints/*:refs/entire/checkpoints/*"
ratios "$BIG" "push-batch-big|git-push-batch-alone|<= 1 s"
for r in $(cat "$WORK/batch-refs"); do git -C "$WORK/push-remote.git" cat-file -e "$r"; done
fi

if want fetch; then
echo "== on-demand fetch of one checkpoint from a remote with $BIG checkpoint refs"
ID="$(nth_id .git/bench-ids-git-refs.txt)"
REF="$(ref_of "$ID")"
for d in empty-ours empty-git; do
    git init -q "$WORK/$d"
    git -C "$WORK/$d" remote add origin "$WORK/net-remote.git"
done
hf --warmup 1 --runs "$RUNS" \
    --prepare "git -C $WORK/empty-ours update-ref -d $REF" \
    -n fetch-show "env -C $WORK/empty-ours git-entire-checkpoint show $ID --json" \
    --prepare "git -C $WORK/empty-git update-ref -d $REF" \
    -n git-fetch-v2 "git -C $WORK/empty-git -c protocol.version=2 fetch -q --no-tags origin $REF:$REF" \
    --prepare "git -C $NET update-ref -d $REF" \
    -n fetch-show-local-refs "git-entire-checkpoint show $ID --json" \
    --prepare "git -C $NET update-ref -d $REF" \
    -n git-fetch-v2-local-refs "git -c protocol.version=2 fetch -q --no-tags origin $REF:$REF"
ratios "$BIG" "fetch-show|git-fetch-v2|<= 1.5" "fetch-show-local-refs|git-fetch-v2|<= 1.5" \
    "git-fetch-v2-local-refs|git-fetch-v2|(git itself)"
git cat-file -e "$REF:metadata.json"
fi
cd "$ROOT"

if want push-queued; then
echo "== push $PUSHN queued refs (processes spawned, wall time)"
Q="$WORK/q"
python3 "$FIXTURE" "$Q" --count "$PUSHN" --store git-refs
git init -q --bare "$WORK/q-remote.git"
git -C "$Q" remote add origin "$WORK/q-remote.git"
while read -r id; do printf '{"ref":"%s"}\n' "$(ref_of "$id")"; done \
    < "$Q/.git/bench-ids-git-refs.txt" > "$WORK/queue-all"
reset_q="rm -rf $WORK/q-remote.git $Q/.git/entire && git init -q --bare $WORK/q-remote.git && cp $WORK/queue-all $Q/.git/entire-checkpoint-push-queue.jsonl"
bash -c "$reset_q"
GIT_TRACE="$WORK/trace" env -C "$Q" git-entire-checkpoint push origin 2>/dev/null
pushes=$(grep -c "built-in: git push" "$WORK/trace" || true)
echo "  $PUSHN queued refs pushed with $pushes git push process(es) (target: one per 200 refs)"
expected=$(( (PUSHN + 199) / 200 ))
awk -v n="$PUSHN" -v p="$pushes" -v e="$expected" 'BEGIN {
    printf "git-push-processes\t%d\t%d\t0\tone per 200 refs\t%d\t%.3f\t<= 1\n", n, p, e, p / e }' >> "$TSV"
hf --runs "$HEAVY" --prepare "bash -c '$reset_q'" \
    -n push-queued "env -C $Q git-entire-checkpoint push origin" \
    -n git-push-glob "git -C $Q push -q --no-verify origin refs/entire/checkpoints/*:refs/entire/checkpoints/*"
ratios "$PUSHN" "push-queued|git-push-glob|(one push per 200 refs)"
fi

if want advertisement; then
echo "== what every plain git push pays: the ref advertisement of a remote with many checkpoint refs"
MIDR="$WORK/mid"
python3 "$FIXTURE" "$MIDR" --count "$MID" --store git-refs --packed --remote "$WORK/mid-remote.git"
git init -q --bare "$WORK/zero-remote.git"
git clone -q --single-branch -b main "$WORK/net-remote.git" "$WORK/dev"
cd "$WORK/dev"
git push -q "$WORK/zero-remote.git" main
for r in zero:"$WORK/zero-remote.git" mid:"$WORK/mid-remote.git" big:"$WORK/net-remote.git"; do
    git remote add "${r%%:*}" "${r#*:}"
    GIT_TRACE_PACKET="$WORK/packets-${r%%:*}" git push -q "${r%%:*}" main 2>/dev/null
done
hf --warmup 1 --runs "$RUNS" -n push-main-0 "git push -q zero main" \
    -n "push-main-$MID" "git push -q mid main" -n "push-main-$BIG" "git push -q big main"
ratios "$MID" "push-main-$MID|push-main-0|(advice)"
ratios "$BIG" "push-main-$BIG|push-main-0|(advice)"
python3 - "$WORK" "$MID" "$BIG" "$TSV" <<'PY'
import re, sys
work, mid, big, tsv = sys.argv[1:]
def received(name):
    # Each advertised ref is one pkt-line: 4 bytes of length plus the payload git traces.
    total = refs = 0
    for line in open(f"{work}/packets-{name}", errors="replace"):
        m = re.search(r"packet: +push< (.*)$", line)
        if m and m.group(1) != "0000":
            total += 4 + len(m.group(1)) + 1
            refs += 1
    return total, refs
zero = received("zero")[0]
with open(tsv, "a") as out:
    for name, n in (("mid", mid), ("big", big)):
        b, refs = received(name)
        print(f"  N={n:>6}  advertisement {b} bytes for {refs} refs ({b / max(refs, 1):.0f} bytes/ref); empty remote {zero} bytes")
        out.write(f"advertisement-bytes\t{n}\t{b}\t0\tempty remote\t{zero}\t{b / zero:.1f}\t(advice)\n")
PY
fi
cd "$ROOT"
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TSV" "$OUT/results.tsv"
    echo "results: $OUT/results.tsv"
fi
