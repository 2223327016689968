#!/usr/bin/env bash
# What our hooks add to the git commands that run them, on the machine's `git` and on
# /usr/bin/git (2.39 on Debian and macOS): `git commit` with nothing staged, `git commit` with a
# staged session of a real ~10 KB transcript (recorded before each commit, untimed), and a no-op
# `git push` (nothing queued, the remote up to date), each in a repository with our hooks
# installed against the same command in one without (benches/paired.py: paired rounds, the
# median of the per-round differences). Then the instructions (callgrind, every process) of one
# run of each, with and without our hooks.
#
# Usage: benches/hooks.sh [CORPUS] [--smoke]   (or BENCH_CORPUS=CORPUS)
#   CORPUS: as benches/write_corpus.sh takes it (the 10 KB transcript is made of its sessions);
#   without one the first 10 KB of the generated transcript of benches/common.sh is used.
#   RUNS (default 40) paired rounds; --smoke: 3 rounds of the debug build, no instruction
#   counts (what .ci/run executes).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CORPUS="${BENCH_CORPUS:-}"
SMOKE=
for a in "$@"; do
    case "$a" in
        --smoke) SMOKE=1 ;;
        *) CORPUS="$a" ;;
    esac
done
if [ -n "$SMOKE" ]; then
    RUNS=3
    export BENCH_PROFILE="${BENCH_PROFILE:-debug}"
fi
. "$ROOT/benches/common.sh" valgrind
RUNS="${RUNS:-40}"
if [ -n "$CORPUS" ]; then
    python3 "$ROOT/benches/corpus_transcripts.py" "$CORPUS" "$WORK" 10k=10000 >/dev/null
else
    head -c 10000 "$T" > "$WORK/10k.jsonl"
fi
SESSION="$WORK/10k.jsonl"

# A repository with one commit pushed to its own bare remote; with our hooks when $2 = hooks.
setup() {
    git init -q --bare "$WORK/$1.remote"
    git init -q -b main "$WORK/$1"
    git -C "$WORK/$1" commit -q --allow-empty -m init
    git -C "$WORK/$1" remote add origin "$WORK/$1.remote"
    git -C "$WORK/$1" push -q origin main
    if [ "$2" = hooks ]; then
        (cd "$WORK/$1" && git-entire-checkpoint hooks install >/dev/null 2>&1)
    fi
}
record="git-entire-checkpoint session record -q --session s --transcript $SESSION --prompt p"
for GIT in "$(command -v git)" /usr/bin/git; do
    [ -x "$GIT" ] || continue
    v="$("$GIT" --version | awk '{ print $3 }')"
    tag="g${v//./}"
    setup "$tag-plain" none
    setup "$tag-hooks" hooks
    plain="$WORK/$tag-plain" hooks="$WORK/$tag-hooks"
    echo "== git $v: git commit --allow-empty, nothing staged"
    python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 3 \
        without="$GIT -C $plain commit -q --allow-empty -m x" \
        with-hooks="$GIT -C $hooks commit -q --allow-empty -m x"
    echo "== git $v: git commit --allow-empty, a staged session of a real $(stat -c %s "$SESSION")-byte transcript"
    python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 3 \
        --prepare "with-hooks=cd $hooks && $record" \
        without="$GIT -C $plain commit -q --allow-empty -m x" \
        with-hooks="$GIT -C $hooks commit -q --allow-empty -m x"
    echo "== git $v: git push, nothing to push"
    python3 "$ROOT/benches/paired.py" --runs "$RUNS" --warmup 3 \
        without="$GIT -C $plain push -q origin main" \
        with-hooks="$GIT -C $hooks push -q origin main"
    [ -n "$SMOKE" ] && continue
    echo "== git $v: instructions (millions), without / with our hooks"
    commit="commit -q --allow-empty -m x"
    # Each count is of the steady state: the commit after a commit that linked a checkpoint
    # runs our binary once (it cannot tell an amend), so one untimed commit goes first.
    "$GIT" -C "$hooks" $commit
    printf '  commit, nothing staged:  %6.1f / %6.1f\n' \
        "$(instructions "$GIT" -C "$plain" $commit | awk '{ print $1 / 1e6 }')" \
        "$(instructions "$GIT" -C "$hooks" $commit | awk '{ print $1 / 1e6 }')"
    (cd "$hooks" && $record)
    printf '  commit, staged session:  %6.1f / %6.1f\n' \
        "$(instructions "$GIT" -C "$plain" $commit | awk '{ print $1 / 1e6 }')" \
        "$(instructions "$GIT" -C "$hooks" $commit | awk '{ print $1 / 1e6 }')"
    # The commits above and the queued checkpoint: pushed untimed, so nothing is left to push.
    "$GIT" -C "$plain" push -q origin main
    "$GIT" -C "$hooks" push -q origin main
    printf '  push, nothing to push:   %6.1f / %6.1f\n' \
        "$(instructions "$GIT" -C "$plain" push -q origin main | awk '{ print $1 / 1e6 }')" \
        "$(instructions "$GIT" -C "$hooks" push -q origin main | awk '{ print $1 / 1e6 }')"
done
