#!/usr/bin/env bash
# `git entire-fetch --all` from a remote advertising N checkpoint refs (issue 30): wall time and
# peak memory, how the refs end up (packed-refs lines, not loose files) and what git's own
# fetch of the same namespace costs (a glob refspec, which writes a loose file per ref; run up
# to 100,000 refs), in a files-backend repository and in a reftable one. docs/performance.md
# ("entire-fetch --all") quotes a run.
# Usage: benches/fetch_all.sh [--smoke] [N]   (default 1000000; --smoke: 300 refs, debug
# binaries: checks that it runs). Builds the binaries; the remote takes a few minutes to make
# at a million refs (one fast-import stream: a commit, a tree and a blob per ref).
set -euo pipefail
if [ "${1:-}" = --smoke ]; then
    set -- 300
    export BENCH_PROFILE=debug
fi
N="${1:-1000000}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
now() { date +%s.%N; }
took() { python3 -c "print(f'{$2 - $1:.1f} s')"; }

O="$WORK/origin.git"
git init -q --bare "$O"
start=$(now)
python3 - "$N" <<'PY' | git --git-dir="$O" fast-import --quiet
import sys
out = sys.stdout
for i in range(int(sys.argv[1])):
    cid = f"{i:012x}"
    meta = f'{{"checkpoint_id": "{cid}"}}\n'
    msg = f"Checkpoint: {cid}\n"
    out.write(f"commit refs/entire/checkpoints/{cid[-2:]}/{cid}\n"
              f"committer Bench <bench@example.invalid> 1767225600 +0000\n"
              f"data {len(msg)}\n{msg}M 100644 inline metadata.json\ndata {len(meta)}\n{meta}\n")
PY
git --git-dir="$O" pack-refs --all
echo "remote of $N checkpoint refs made in $(took "$start" "$(now)")"

for format in files reftable; do
    R="$WORK/ours-$format"
    git init -q --ref-format="$format" "$R"
    git -C "$R" remote add origin "$O"
    start=$(now)
    /usr/bin/time -f "%M" -o "$WORK/rss" env -C "$R" git-entire-fetch origin --all -q >/dev/null
    end=$(now)
    count=$(git -C "$R" for-each-ref refs/entire/checkpoints/ | wc -l)
    loose=$(find "$R/.git/refs" -type f -path '*entire*' | wc -l)
    [ "$count" -eq "$N" ] || { echo "$format: $count refs, not $N" >&2; exit 1; }
    echo "entire-fetch --all, $format: $(took "$start" "$end"), peak $(( $(cat "$WORK/rss") / 1024 )) MiB," \
        "$count refs, $loose loose ref files, .git/refs + packed-refs + reftable:" \
        "$(du -sch "$R/.git/refs" "$R"/.git/packed-refs "$R"/.git/reftable 2>/dev/null | tail -1 | cut -f1)"
    start=$(now)
    env -C "$R" git-entire-fetch origin --all -q >/dev/null
    echo "  again (everything present): $(took "$start" "$(now)")"

    # git's own fetch writes a loose file per ref in the files backend: past 100,000 refs that
    # is gigabytes of disk and many minutes, so the baseline is run up to there.
    [ "$N" -le 100000 ] || { rm -rf "$R"; continue; }
    G="$WORK/git-$format"
    git init -q --ref-format="$format" "$G"
    start=$(now)
    git -C "$G" fetch -q --no-tags "$O" 'refs/entire/checkpoints/*:refs/entire/checkpoints/*'
    end=$(now)
    loose=$(find "$G/.git/refs" -type f -path '*entire*' | wc -l)
    echo "git fetch of the namespace (glob refspec), $format: $(took "$start" "$end"), $loose loose ref files," \
        "$(du -sch "$G/.git/refs" "$G"/.git/packed-refs "$G"/.git/reftable 2>/dev/null | tail -1 | cut -f1)"
    rm -rf "$G" "$R"
done
