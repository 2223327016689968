#!/usr/bin/env bash
# The git-plumbing baseline of one checkpoint write: the same objects our `write` makes (five
# blobs, two trees, one orphan commit) and a new ref, with as few git processes as plumbing
# allows (one hash-object for all blobs, two mktree, commit-tree, update-ref).
# Usage: plumbing_write.sh DIR   (DIR holds metadata.json and 0/{metadata.json,full.jsonl,
# content_hash.txt,prompt.txt}); run inside the repository.
set -euo pipefail
d="$1"
mapfile -t blobs < <(git hash-object -w "$d/metadata.json" "$d/0/metadata.json" \
    "$d/0/full.jsonl" "$d/0/content_hash.txt" "$d/0/prompt.txt")
meta="${blobs[0]}" sub_meta="${blobs[1]}" transcript="${blobs[2]}" hash="${blobs[3]}" prompt="${blobs[4]}"
sub=$(printf '100644 blob %s\tcontent_hash.txt\n100644 blob %s\tfull.jsonl\n100644 blob %s\tmetadata.json\n100644 blob %s\tprompt.txt\n' \
    "$hash" "$transcript" "$sub_meta" "$prompt" | git mktree)
root=$(printf '040000 tree %s\t0\n100644 blob %s\tmetadata.json\n' "$sub" "$meta" | git mktree)
commit=$(git commit-tree -m "Checkpoint: plumbing" "$root")
git update-ref "refs/bench/plumbing/$$-$RANDOM" "$commit" ""
