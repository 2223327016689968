#!/usr/bin/env python3
"""Real agent transcripts of a given size, made of different real sessions (not one file
repeated: repeated text compresses unrealistically fast).

Usage: corpus_transcripts.py CORPUS OUT_DIR NAME=BYTES...

CORPUS is a bare repository, or a folder of them, holding checkpoint data (the transcripts of
every ref: full.jsonl, transcript.jsonl, raw_transcript). Every distinct transcript blob present
is read once, in the order of its blob ID (a fixed, unbiased order). OUT_DIR/NAME.jsonl gets whole
lines, a piece of about BYTES/8 (at least one line) from each transcript in turn, going round
again when all were used, up to BYTES: a 10 KB file holds a few sessions' first turns, a 100 MB
one every session whole. Prints what each file holds.
"""

import os
import subprocess
import sys

NAMES = (b"full.jsonl", b"transcript.jsonl", b"raw_transcript")


def repositories(corpus):
    if os.path.exists(os.path.join(corpus, "HEAD")):
        return [corpus]
    return sorted(
        os.path.join(corpus, d) for d in os.listdir(corpus) if d.endswith(".git"))


class Repo:
    """The distinct transcript blobs present in a repository, read on demand."""

    def __init__(self, path):
        listed = subprocess.run(
            ["git", "-C", path, "rev-list", "--objects", "--all", "--missing=allow-any"],
            check=True, capture_output=True).stdout
        ids = sorted({line.split(b" ", 1)[0] for line in listed.splitlines()
                      if line.rsplit(b"/", 1)[-1].split(b" ")[-1] in NAMES})
        checked = subprocess.run(["git", "-C", path, "cat-file", "--batch-check"],
                                 input=b"".join(i + b"\n" for i in ids),
                                 check=True, capture_output=True).stdout
        self.blobs = [(h[0], int(h[2])) for h in map(bytes.split, checked.splitlines())
                      if h[-1] != b"missing" and int(h[2]) > 0]
        self.batch = subprocess.Popen(["git", "-C", path, "cat-file", "--batch"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, oid):
        self.batch.stdin.write(oid + b"\n")
        self.batch.stdin.flush()
        size = int(self.batch.stdout.readline().split()[2])
        data = self.batch.stdout.read(size + 1)[:-1]
        return data if data.endswith(b"\n") else data + b"\n"


def main():
    corpus, out_dir, *wanted = sys.argv[1:]
    found = {}
    for path in repositories(corpus):
        repo = Repo(path)
        for oid, size in repo.blobs:
            found.setdefault(oid, (repo, size))
    order = sorted(found)
    print(f"{len(order)} distinct transcripts, "
          f"{sum(s for _, s in found.values()) / 1e6:.1f} MB")
    cache = {}

    def text_of(k):
        if k not in cache:
            cache[k] = found[order[k]][0].read(order[k])
        return cache[k]

    for spec in wanted:
        name, size = spec.split("=")
        size = int(size)
        piece = max(size // 8, 1)
        offsets = [0] * len(order)
        have, used, i = 0, set(), 0
        with open(os.path.join(out_dir, f"{name}.jsonl"), "wb") as f:
            while have < size:
                k = i % len(order)
                i += 1
                text = text_of(k)
                if offsets[k] >= len(text):
                    offsets[k] = 0  # every line of it used: again from its start
                start = offsets[k]
                end = text.find(b"\n", min(start + min(piece, size - have), len(text)) - 1) + 1
                f.write(text[start:end])
                have += end - start
                offsets[k] = end
                used.add(k)
        print(f"{name}.jsonl: {have} bytes from {len(used)} transcripts")


if __name__ == "__main__":
    main()
