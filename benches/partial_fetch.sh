#!/usr/bin/env bash
# Partial fetch benchmark (issue 5, item 5): fetching one checkpoint whose transcript is large,
# whole (`git entire-fetch <remote> <id>`) vs without transcripts
# (`git entire-fetch --filter=blob:none <remote> <id>`), against a plain `git fetch
# --filter=blob:none` of the same ref into an empty promisor repository as the baseline for the
# filtered one; then the first transcript read of the partially fetched checkpoint (the lazy
# fetch). All measured in the same run.
# Usage: benches/partial_fetch.sh [TRANSCRIPT_MB]   (default 16). Builds release binaries.
set -euo pipefail
MB="${1:-16}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" hyperfine
cd "$WORK"
git init -q --bare remote.git
git -C remote.git config uploadpack.allowFilter true
git init -q -b main src
(
    cd src
    git commit -q --allow-empty -m init
    git remote add origin ../remote.git
    git push -q origin main
    # Agent-like lines that do not compress to nothing.
    python3 - "$MB" > t.jsonl <<'PY'
import json, random, sys
random.seed(1)
words = ["read", "file", "the", "tool", "call", "result", "ok", "diff", "src", "test", "error"]
size, target = 0, int(sys.argv[1]) << 20
while size < target:
    line = json.dumps({"type": "assistant", "text": " ".join(random.choice(words) for _ in range(60))}) + "\n"
    sys.stdout.write(line)
    size += len(line)
PY
    git entire-checkpoint write --session bench --transcript t.jsonl --prompt p > "$WORK/id"
    git entire-checkpoint push origin 2>/dev/null
)
ID="$(cat "$WORK/id")"
REF="refs/entire/checkpoints/${ID: -2}/$ID"
git clone -q remote.git clone
git init -q --bare empty.git
git -C empty.git config remote.origin.url "$WORK/remote.git"
git -C empty.git config remote.origin.promisor true
git -C empty.git config remote.origin.partialclonefilter blob:none
# Each run starts without the checkpoint and without loose leftovers from the previous run.
RESET_CLONE="git -C $WORK/clone update-ref -d $REF 2>/dev/null; rm -rf $WORK/clone/.git/entire/partial.git; git -C $WORK/clone gc -q --prune=now"
RESET_EMPTY="rm -rf $WORK/empty.git/objects/pack/*; git -C $WORK/empty.git update-ref -d $REF 2>/dev/null; true"
echo "== one checkpoint with a ${MB} MiB transcript"
hyperfine -N --warmup 1 --runs 8 --export-json "$WORK/a.json" \
    --prepare "sh -c '$RESET_CLONE'" "git -C $WORK/clone entire-fetch origin $ID" \
    --prepare "sh -c '$RESET_CLONE'" "git -C $WORK/clone entire-fetch --filter=blob:none origin $ID" \
    --prepare "sh -c '$RESET_EMPTY'" \
    "git -C $WORK/empty.git -c protocol.version=2 fetch -q --no-tags --filter=blob:none origin +$REF:$REF" \
    --prepare "sh -c '$RESET_CLONE; git -C $WORK/clone entire-fetch -q --filter=blob:none origin $ID'" \
    "git -C $WORK/clone entire-checkpoint cat $ID 0/full.jsonl --no-fetch" >/dev/null
python3 - "$WORK/a.json" "$MB" <<'PY'
import json, sys
r = [x["mean"] * 1e3 for x in json.load(open(sys.argv[1]))["results"]]
whole, partial, base, lazy = r
print(f"{sys.argv[2]} MiB transcript: whole fetch {whole:.1f} ms; filtered fetch {partial:.1f} ms "
      f"(plain git fetch --filter=blob:none {base:.1f} ms, ratio {partial/base:.2f}); "
      f"first transcript read (lazy fetch) {lazy:.1f} ms")
PY
