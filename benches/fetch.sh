#!/usr/bin/env bash
# On-demand fetch benchmark (issue 5): `git entire-checkpoint show <id>` in a clone that lacks
# the checkpoint, against a remote holding N checkpoint refs, vs a plain protocol-v2
# `git fetch` of that one ref into an empty repository — both measured in the same run.
# Also measured with the clone itself holding N checkpoint refs.
# Usage: benches/fetch.sh [N]   (default 100000). Builds release binaries.
set -euo pipefail
N="${1:-100000}"
source "$(dirname "$0")/setup.sh"
git init -q --bare remote.git
git init -q -b main src
(
    cd src
    git commit -q --allow-empty -m init
    git remote add origin ../remote.git
    git push -q origin main
    printf '{"type":"user","text":"hello"}\n' > t.jsonl
    git entire-checkpoint write --session bench --transcript t.jsonl > "$WORK/id"
    git entire-checkpoint push origin 2>/dev/null
)
ID="$(cat "$WORK/id")"
REF="refs/entire/checkpoints/${ID: -2}/$ID"
TIP="$(git -C remote.git rev-parse "$REF")"
# N more checkpoint refs on the remote, written as a sorted packed-refs file (fast to create).
python3 - "$WORK/remote.git" "$N" "$TIP" "$REF" <<'PY'
import sys
repo, n, tip, keep = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
refs = {keep: tip}
for i in range(n):
    h = f"{i:012x}"
    refs[f"refs/entire/checkpoints/{h[-2:]}/{h}"] = tip
with open(f"{repo}/packed-refs", "w") as f:
    f.write("# pack-refs with: peeled fully-peeled sorted \n")
    for name in sorted(refs):
        f.write(f"{tip} {name}\n")
PY
rm -f "remote.git/$REF"
git clone -q remote.git clone
git init -q empty
echo "== remote with $N checkpoint refs; the clone has none"
hyperfine -N --warmup 2 --runs 15 --export-json "$WORK/a.json" \
    --prepare "git -C $WORK/clone update-ref -d $REF" \
    "git -C $WORK/clone entire-checkpoint show $ID --json" \
    --prepare "git -C $WORK/empty update-ref -d $REF" \
    "git -C $WORK/empty -c protocol.version=2 fetch -q --no-tags $WORK/remote.git $REF:$REF" >/dev/null
# The same clone holding N checkpoint refs itself.
cp "$WORK/remote.git/packed-refs" "$WORK/clone/.git/packed-refs.tmp"
grep -v " $REF\$" "$WORK/clone/.git/packed-refs.tmp" | grep -v "refs/heads\|refs/remotes" > "$WORK/extra" || true
python3 - "$WORK/clone/.git" "$WORK/extra" <<'PY'
import sys
git_dir, extra = sys.argv[1], sys.argv[2]
have = open(f"{git_dir}/packed-refs").read().splitlines() if __import__("os").path.exists(f"{git_dir}/packed-refs") else []
lines = [l for l in have if l and not l.startswith("#")] + [l for l in open(extra).read().splitlines() if l and not l.startswith("#")]
lines = sorted(set(lines), key=lambda l: l.split(" ", 1)[1])
open(f"{git_dir}/packed-refs", "w").write("# pack-refs with: peeled fully-peeled sorted \n" + "\n".join(lines) + "\n")
PY
rm -f "$WORK/clone/.git/packed-refs.tmp"
echo "== the clone itself holds $N checkpoint refs"
hyperfine -N --warmup 2 --runs 15 --export-json "$WORK/b.json" \
    --prepare "git -C $WORK/clone update-ref -d $REF" \
    "git -C $WORK/clone entire-checkpoint show $ID --json" >/dev/null
python3 - "$WORK/a.json" "$WORK/b.json" "$N" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["results"]
b = json.load(open(sys.argv[2]))["results"]
ours, base, big = a[0]["mean"], a[1]["mean"], b[0]["mean"]
print(f"N={sys.argv[3]}: plain v2 fetch {base*1e3:.1f} ms; show with on-demand fetch {ours*1e3:.1f} ms (ratio {ours/base:.2f}, target <= 1.5); "
      f"same with {sys.argv[3]} local checkpoint refs {big*1e3:.1f} ms (ratio {big/base:.2f})")
PY
