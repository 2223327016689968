#!/usr/bin/env bash
# Hostile checkpoint data (docs/security.md, "Hostile checkpoint data cannot stall or exhaust a
# read"), measured on release binaries:
#  1. a checkpoint whose sessions[] names N directories sharing one subtree (cheap to send):
#     wall time of `show`, `show --json`, `list` and `list --ids` (target: under 2 s at
#     N = 100,000);
#  2. a transcript of S bytes of zeros (a few MB on the wire): peak memory of
#     `show --transcript` and `cat` (/usr/bin/time -v, the largest of our process and the git
#     it runs; target: under 256 MiB at 2 GiB), and that the bytes arrive whole;
#  3. eight sessions sharing one session document padded to D bytes (a few KB on the wire):
#     peak memory of `show --json` just under the document cap and far over it (400 MiB,
#     refused unread); and R checkpoint refs at one commit whose root document is D bytes that
#     do not parse: wall time of `list --ids` (the document is parsed once, not once per ref).
# Usage: benches/hostile.sh [N] [S]   (defaults 100000 and 2147483648; D = 15 MiB, R = 200)
#        benches/hostile.sh --smoke   (N = 2000, S = 64 MiB, D = 2 MiB, R = 20, debug binaries:
#                                      that it runs)
set -euo pipefail
N=100000
S=$((2 << 30))
D=$((15 << 20))
R=200
if [ "${1:-}" = --smoke ]; then
    N=2000 S=$((64 << 20)) D=$((2 << 20)) R=20
    export BENCH_PROFILE=debug
else
    N="${1:-$N}" S="${2:-$S}"
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/benches/common.sh" python3
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
cd "$WORK"
git init -q -b main r
cd r
git commit -q --allow-empty -m init
ID=$(git entire-checkpoint write --session s1 --transcript "$T" --prompt "hello")
REF=$(git for-each-ref --format='%(refname)' refs/entire/checkpoints/)

# 1. N sessions sharing the subtree of slot 0.
python3 - "$REF" "$N" <<'EOF'
import json, subprocess, sys
ref, n = sys.argv[1], int(sys.argv[2])
def git(*a, inp=None):
    return subprocess.run(["git", *a], input=inp, capture_output=True, check=True).stdout.decode().strip()
slot = git("rev-parse", ref + ":0")
meta = json.loads(git("cat-file", "blob", ref + ":metadata.json"))
meta["sessions"] = [{"metadata": f"/{i}/metadata.json", "transcript": f"/{i}/full.jsonl",
                     "content_hash": f"/{i}/content_hash.txt", "prompt": f"/{i}/prompt.txt"} for i in range(n)]
blob = git("hash-object", "-w", "--stdin", inp=json.dumps(meta).encode())
entries = [f"100644 blob {blob}\tmetadata.json"] + [f"040000 tree {slot}\t{i}" for i in range(n)]
tree = git("mktree", inp=("\n".join(entries) + "\n").encode())
commit = git("commit-tree", tree, "-p", git("rev-parse", ref), "-m", "many sessions")
git("update-ref", ref, commit)
EOF
echo "checkpoint $ID: $N sessions sharing one subtree"
timed() {
    local what="$1"
    shift
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    printf '  %-34s %6.2f s\n' "$what" "$(echo "$end - $start" | bc)"
}
command -v bc >/dev/null || { apt-get update -qq && apt-get install -y -qq bc >/dev/null; }
timed "show" git entire-checkpoint show "$ID" --no-pager
timed "show --json" git entire-checkpoint show "$ID" --json
timed "list (summary index written)" git entire-checkpoint list --no-pager
timed "list (summary index read)" git entire-checkpoint list --no-pager
timed "list (each listed unreadable)" sh -c "git entire-checkpoint list --no-pager 2>/dev/null || true"
timed "list --ids" sh -c "git entire-checkpoint list --ids 2>/dev/null || true"

# 2. A transcript of S zero bytes, stored as git stores a large file (streamed into a loose
#    object, a few MB compressed), as session 0 of the checkpoint's first version.
truncate -s "$S" ../zeros
ZB=$(git hash-object -w ../zeros)
rm ../zeros
python3 - "$REF" "$ZB" <<'EOF'
import subprocess, sys
ref, blob = sys.argv[1], sys.argv[2]
def git(*a, inp=None):
    return subprocess.run(["git", *a], input=inp, capture_output=True, check=True).stdout.decode().strip()
slot = [l for l in git("ls-tree", ref + "~1:0").splitlines() if not l.endswith("\tfull.jsonl")]
slot.append(f"100644 blob {blob}\tfull.jsonl")
slot_tree = git("mktree", inp=("\n".join(slot) + "\n").encode())
root = [f"040000 tree {slot_tree}\t0" if l.endswith("\t0") else l
        for l in git("ls-tree", ref + "~1").splitlines()]
tree = git("mktree", inp=("\n".join(root) + "\n").encode())
git("update-ref", ref, git("commit-tree", tree, "-p", git("rev-parse", ref), "-m", "zeros"))
EOF
echo "checkpoint $ID: a $S-byte transcript (object store: $(git count-objects -vH | awk -F': ' '/size-pack|^size:/ { printf "%s %s ", $1, $2 }'))"
peak() {
    local what="$1"
    shift
    /usr/bin/time -v "$@" 2>time.txt | wc -c >bytes.txt
    printf '  %-34s %6d MiB peak, %s bytes out\n' "$what" \
        $(($(awk -F': ' '/Maximum resident set size/ { print $2 }' time.txt) / 1024)) "$(tr -d ' ' <bytes.txt)"
    [ "$(tr -d ' ' <bytes.txt)" = "$S" ] || { echo "hostile.sh: $what did not write the whole transcript" >&2; exit 1; }
}
peak "show --transcript" git entire-checkpoint show "$ID" --transcript --no-pager
peak "cat 0/full.jsonl" git entire-checkpoint cat "$ID" 0/full.jsonl

# 3. Eight sessions sharing one padded session document; R refs at one unparsable root document.
BASE=$(git rev-parse "$REF~2")   # the checkpoint as written, before sections 1 and 2
padded() {
    python3 - "$REF" "$BASE" "$1" <<'EOF'
import json, subprocess, sys
ref, base, pad = sys.argv[1], sys.argv[2], int(sys.argv[3])
def git(*a, inp=None):
    return subprocess.run(["git", *a], input=inp, capture_output=True, check=True).stdout.decode().strip()
meta = json.loads(git("cat-file", "blob", base + ":0/metadata.json"))
meta["padding"] = "a" * pad
doc = git("hash-object", "-w", "--stdin", inp=json.dumps(meta).encode())
slot = [l for l in git("ls-tree", base + ":0").splitlines() if not l.endswith("\tmetadata.json")]
slot.append(f"100644 blob {doc}\tmetadata.json")
slot_tree = git("mktree", inp=("\n".join(slot) + "\n").encode())
root = json.loads(git("cat-file", "blob", base + ":metadata.json"))
root["sessions"] = [dict(root["sessions"][0], metadata=f"/{i}/metadata.json") for i in range(8)]
rdoc = git("hash-object", "-w", "--stdin", inp=json.dumps(root).encode())
entries = [f"100644 blob {rdoc}\tmetadata.json"] + [f"040000 tree {slot_tree}\t{i}" for i in range(8)]
tree = git("mktree", inp=("\n".join(entries) + "\n").encode())
git("update-ref", ref, git("commit-tree", tree, "-p", git("rev-parse", ref), "-m", "padded"))
EOF
}
peak_of() {
    local what="$1"
    shift
    /usr/bin/time -v "$@" 2>time.txt >/dev/null || true
    printf '  %-34s %6d MiB peak\n' "$what" \
        $(($(awk -F': ' '/Maximum resident set size/ { print $2 }' time.txt) / 1024))
}
echo "checkpoint $ID: 8 sessions sharing one session document"
padded "$D"
peak_of "show --json, $((D >> 20)) MiB document" git entire-checkpoint show "$ID" --json
padded $((400 << 20))
peak_of "show --json, 400 MiB (refused)" git entire-checkpoint show "$ID" --json
{ git entire-checkpoint show "$ID" 2>&1 >/dev/null || true; } | sed "s/^/    /"
python3 - "$R" "$D" <<'EOF'
import subprocess, sys
r, pad = int(sys.argv[1]), int(sys.argv[2])
def git(*a, inp=None):
    return subprocess.run(["git", *a], input=inp, capture_output=True, check=True).stdout.decode().strip()
doc = git("hash-object", "-w", "--stdin", inp=b'{"padding": "' + b"a" * pad + b'", ')
tree = git("mktree", inp=f"100644 blob {doc}\tmetadata.json\n".encode())
commit = git("commit-tree", tree, "-m", "unparsable")
refs = "".join(f"create refs/entire/checkpoints/{i % 100:02d}/{i:010x}{i % 100:02d}\0{commit}\0" for i in range(r))
subprocess.run(["git", "update-ref", "-z", "--stdin"], input=refs.encode(), check=True)
EOF
echo "$R checkpoint refs at one commit whose root document does not parse ($D bytes)"
timed "list (each listed unreadable)" sh -c "git entire-checkpoint list --no-pager 2>/dev/null || true"
timed "list --ids" sh -c "git entire-checkpoint list --ids 2>/dev/null || true"
