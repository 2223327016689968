#!/usr/bin/env bash
# Push benchmarks (issue 4), whole processes timed with hyperfine, each against a baseline
# measured in the same run:
#   1. pre-push with an empty queue vs a no-op process (`true`);
#   2. pushing 1,000 queued checkpoint refs with `git entire-checkpoint push` vs one plain
#      `git push` of the same refs with a glob refspec, plus the number of `git push`
#      processes our push spawned.
# Usage: benches/push.sh [N]   (N = queued refs for (2), default 1000). Builds release binaries.
set -euo pipefail
N="${1:-1000}"
source "$(dirname "$0")/setup.sh"
git init -q --bare remote.git
git init -q -b main repo
cd repo
git commit -q --allow-empty -m init
git remote add origin ../remote.git
printf '{"type":"user","text":"hello"}\n' > t.jsonl
git entire-checkpoint write --session warm --transcript t.jsonl >/dev/null
git entire-checkpoint push origin 2>/dev/null

echo "== pre-push, empty queue, vs a no-op process"
hyperfine -N --warmup 20 --runs 200 --export-json "$WORK/prepush.json" \
    'true' 'git-entire-prepush origin ../remote.git' >/dev/null
python3 - "$WORK/prepush.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
noop, ours = r["true"]["mean"], r["git-entire-prepush origin ../remote.git"]["mean"]
print(f"no-op {noop*1e3:.2f} ms, pre-push {ours*1e3:.2f} ms, difference {(ours-noop)*1e3:.2f} ms (target: within 5 ms)")
PY

echo "== pushing $N queued refs"
for i in $(seq 1 "$N"); do
    git entire-checkpoint write --session "s$i" --transcript t.jsonl >/dev/null
done
cp "$(git rev-parse --git-common-dir)/entire-checkpoint-push-queue.jsonl" "$WORK/queue.bak"
reset='rm -rf ../remote.git .git/entire && git init -q --bare ../remote.git && cp '"$WORK"'/queue.bak .git/entire-checkpoint-push-queue.jsonl'
GIT_TRACE="$WORK/trace" git entire-checkpoint push origin 2>/dev/null
pushes=$(grep -c "built-in: git push" "$WORK/trace" || true)
hyperfine --runs 5 --prepare "$reset" --export-json "$WORK/push.json" \
    'git entire-checkpoint push origin' \
    "git push -q --no-verify origin 'refs/entire/checkpoints/*:refs/entire/checkpoints/*'" >/dev/null
python3 - "$WORK/push.json" "$pushes" "$N" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ours, git = res[0]["mean"], res[1]["mean"]
print(f"ours {ours:.3f} s with {sys.argv[2]} git push process(es) for {sys.argv[3]} refs; plain git push {git:.3f} s; ratio {ours/git:.2f}")
PY
