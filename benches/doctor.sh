#!/usr/bin/env bash
# doctor benchmark (issue 7), whole processes timed with hyperfine against a baseline measured in
# the same run: `doctor --json` over N healthy checkpoint refs vs one `git cat-file --batch`
# that reads every root metadata.json (the least any check of every checkpoint's documents
# must read). The refs are made with `git fast-import`, packed.
# Usage: benches/doctor.sh [N]   (default 10000). Builds release binaries.
set -euo pipefail
N="${1:-10000}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" hyperfine
cd "$WORK"
git init -q -b main repo
cd repo
git commit -q --allow-empty -m init
python3 - "$N" <<'PY' | git fast-import --quiet
import sys
n = int(sys.argv[1])
out = sys.stdout
def data(text):
    b = text.encode()
    out.write(f"data {len(b)}\n"); out.flush(); sys.stdout.buffer.write(b); out.write("\n")
for i in range(n):
    cid = f"{i:012x}"
    root = ('{\n  "checkpoint_id": "%s",\n  "strategy": "manual-commit",\n  "checkpoints_count": 1,\n'
            '  "files_touched": [],\n  "sessions": [\n    {\n      "metadata": "/0/metadata.json",\n'
            '      "transcript": "/0/full.jsonl",\n      "content_hash": "/0/content_hash.txt",\n'
            '      "prompt": "/0/prompt.txt"\n    }\n  ]\n}\n') % cid
    sess = ('{\n  "checkpoint_id": "%s",\n  "session_id": "s%d",\n  "strategy": "manual-commit",\n'
            '  "created_at": "2026-09-01T08:00:00Z",\n  "checkpoints_count": 1,\n  "files_touched": [],\n'
            '  "model": ""\n}\n') % (cid, i)
    out.write(f"commit refs/entire/checkpoints/{cid[-2:]}/{cid}\n")
    out.write("committer Bench <bench@example.invalid> 1767225600 +0000\n")
    data(f"Checkpoint: {cid}\n")
    out.write("M 100644 inline metadata.json\n"); data(root)
    out.write("M 100644 inline 0/metadata.json\n"); data(sess)
    out.write("M 100644 inline 0/full.jsonl\n"); data('{"type":"user"}\n')
    out.write("\n")
PY
git pack-refs --all
git entire-checkpoint hooks install >/dev/null
git entire-checkpoint doctor >/dev/null   # healthy, or the benchmark is not measuring doctor

echo "== doctor over $N checkpoint refs"
baseline="git for-each-ref --format='%(refname):metadata.json' refs/entire/checkpoints | git cat-file --batch >/dev/null"
hyperfine --warmup 1 --runs 5 --export-json "$WORK/doctor.json" \
    'git entire-checkpoint doctor --json' "$baseline" >/dev/null
python3 - "$WORK/doctor.json" "$N" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ours, base = res[0]["mean"], res[1]["mean"]
print(f"doctor {ours:.3f} s over {sys.argv[2]} refs; cat-file --batch of every root metadata.json {base:.3f} s; ratio {ours/base:.2f}")
PY
