#!/usr/bin/env bash
# The repository formats (issue 31): `show`, `list` and `write` over N git-refs checkpoints in a
# files-backend SHA-1 repository (the baseline) and in reftable, SHA-256 and reftable + SHA-256
# repositories, with git's own plumbing beside each (`cat-file -p`, `for-each-ref`, the
# hash-object/mktree/commit-tree/update-ref write of benches/plumbing_write.sh), in paired
# rounds (benches/paired.py: each ratio is the median of the per-round ratios to the first
# command of its table). docs/performance.md ("Repository formats") quotes a run; the same
# tables with BASE_BIN set compare a previous build on the files backend.
# Usage: benches/formats.sh [--smoke] [N] [RUNS]   (defaults 10000, 30; --smoke: 30 checkpoints,
# 3 rounds, debug binaries: checks that it runs, its ratios mean nothing). With BASE_BIN=DIR
# (a directory holding another build's git-entire-checkpoint), its show and list on the files
# backend are timed beside ours. Builds the binaries; needs git 2.45+ (reftable).
set -euo pipefail
if [ "${1:-}" = --smoke ]; then
    set -- 30 3
    export BENCH_PROFILE=debug
fi
N="${1:-10000}"
RUNS="${2:-30}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
PAIRED=(python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 3 --n "$N")
FORMATS="files-sha1 reftable-sha1 files-sha256 reftable-sha256"

# The objects of one write of the transcript, for the plumbing baseline.
write_objects_of_one_checkpoint

for f in $FORMATS; do
    python3 "$ROOT/benches/fixture.py" "$WORK/$f" --count "$N" --store git-refs --packed \
        --ref-format "${f%-*}" --object-format "${f#*-}"
    id="$(sed -n "$((N / 2 + 1))p" "$WORK/$f/.git/bench-ids-git-refs.txt")"
    # Checked with git and with our reader before anything is timed.
    [ "$(git -C "$WORK/$f" rev-parse --show-ref-format --show-object-format | tr '\n' ' ')" = \
        "${f%-*} ${f#*-} " ]
    [ "$(git -C "$WORK/$f" for-each-ref refs/entire/checkpoints/ | wc -l)" -eq "$N" ]
    env -C "$WORK/$f" git-entire-checkpoint show "$id" --json | grep -q "\"checkpoint_id\": \"$id\""
    eval "ID_${f//-/_}=$id"
done
id_of() { local v="ID_${1//-/_}"; echo "${!v}"; }

echo "== show <id> --json, N = $N"
cmds=()
for f in $FORMATS; do
    cmds+=("show-$f=env -C $WORK/$f git-entire-checkpoint show $(id_of "$f") --json")
done
[ -n "${BASE_BIN:-}" ] && cmds+=("show-files-sha1-base=env -C $WORK/files-sha1 $BASE_BIN/git-entire-checkpoint show $(id_of files-sha1) --json")
for f in $FORMATS; do
    cmds+=("cat-file-$f=git -C $WORK/$f cat-file -p $(ref_of "$(id_of "$f")"):metadata.json")
done
"${PAIRED[@]}" "${cmds[@]}"

echo "== list --json, N = $N"
cmds=()
for f in $FORMATS; do
    cmds+=("list-$f=env -C $WORK/$f git-entire-checkpoint list --json")
done
[ -n "${BASE_BIN:-}" ] && cmds+=("list-files-sha1-base=env -C $WORK/files-sha1 $BASE_BIN/git-entire-checkpoint list --json")
for f in $FORMATS; do
    cmds+=("for-each-ref-$f=git -C $WORK/$f for-each-ref refs/entire/checkpoints/")
done
"${PAIRED[@]}" "${cmds[@]}"

echo "== write (100 KB transcript) against N = $N, libgit2's objects and git's plumbing"
cmds=()
for f in $FORMATS; do
    cmds+=("write-$f=env -C $WORK/$f git-entire-checkpoint write -q --session s --transcript $T --prompt p")
done
for f in $FORMATS; do
    cmds+=("plumbing-write-$f=env -C $WORK/$f bash $ROOT/benches/plumbing_write.sh $WORK/objs")
done
"${PAIRED[@]}" "${cmds[@]}"
