#!/usr/bin/env bash
# doctor at many branches (issue 51): `doctor --json` in a repository of a 2,000-commit history
# with 20, 200 and 2,000 unmerged branches (each one commit off an older commit of main, as stale
# feature branches are), timed with hyperfine against `git for-each-ref --no-merged HEAD`, the
# least any check of which branches the current one has not merged must run. The cost of doctor
# must not grow with the branch count beyond git's own.
# Usage: benches/doctor_branches.sh [--smoke]   (--smoke: debug binaries, 20 and 200 branches,
# one run each). Builds release binaries otherwise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
COUNTS="20 200 2000"
RUNS=5
if [ "${1:-}" = --smoke ]; then
    export BENCH_PROFILE=debug
    COUNTS="20 200"
    RUNS=1
fi
. "$ROOT/benches/common.sh" hyperfine
cd "$WORK"

# One history of 2,000 commits, then a copy of it per branch count.
git init -q -b main base
python3 - <<'PY' | git -C base fast-import --quiet
import sys
out = sys.stdout
for i in range(2000):
    msg = f"change {i}\n"
    out.write(f"commit refs/heads/main\nmark :{i + 1}\n")
    out.write(f"committer Bench <bench@example.invalid> {1767225600 + i * 60} +0000\n")
    out.write(f"data {len(msg)}\n{msg}")
    if i:
        out.write(f"from :{i}\n")
    out.write(f"M 100644 inline file{i % 50}.txt\ndata {len(msg)}\n{msg}\n")
PY
git -C base checkout -q main

for n in $COUNTS; do
    git clone -q --no-local base "b$n"
    python3 - "$n" <<'PY' | git -C "b$n" fast-import --quiet
import sys
n = int(sys.argv[1])
out = sys.stdout
for i in range(n):
    msg = f"feature {i}\n"
    out.write(f"commit refs/heads/feature/{i}\n")
    out.write(f"committer Bench <bench@example.invalid> {1767225600 + i} +0000\n")
    out.write(f"data {len(msg)}\n{msg}")
    out.write(f"from refs/heads/main~{(i * 7) % 1999}\n")
    out.write(f"M 100644 inline feature{i}.txt\ndata {len(msg)}\n{msg}\n")
PY
    git -C "b$n" pack-refs --all
    (cd "b$n" && git entire-checkpoint hooks install >/dev/null && git entire-checkpoint doctor >/dev/null)
done

echo "== doctor at $COUNTS unmerged branches"
for n in $COUNTS; do
    cd "$WORK/b$n"
    hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/b$n.json" \
        'git entire-checkpoint doctor --json' \
        'git for-each-ref --no-merged HEAD refs/heads/ refs/remotes/' >/dev/null 2>&1
    python3 - "$WORK/b$n.json" "$n" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ours, base = res[0]["mean"], res[1]["mean"]
print(f"{sys.argv[2]:>5} branches: doctor {ours:.3f} s; for-each-ref --no-merged {base:.3f} s")
PY
done
