#!/usr/bin/env python3
"""Scale fixture for the benchmarks: a repository holding N checkpoints in the exact on-disk
format (docs/format.md), built in seconds through one `git fast-import` stream.

One template checkpoint is written by our own `git entire-checkpoint write` (so the format is
whatever the product writes); its files are then replayed for N generated IDs with the template
ID replaced, as orphan commits on `refs/entire/checkpoints/<shard>/<id>` (git-refs store) and/or
as subtrees `<id[:2]>/<id[2:]>/` of `refs/heads/entire/checkpoints/v1` (git-branch store, one
commit per batch of checkpoints so the branch has a history).

Usage:
  fixture.py REPO --count N [--store git-refs|git-branch|both] [--packed]
             [--remote BARE] [--transcript-bytes B] [--object-format sha1|sha256]
             [--ref-format files|reftable]

`git-entire-checkpoint` must be on PATH. The generated IDs are written one per line to
`<git dir>/bench-ids-<store>.txt` (generation order). `--packed` runs `git pack-refs --all`
(a sorted packed-refs file, no loose checkpoint refs); without it every ref is a loose file.
`--remote BARE` makes a bare mirror holding the same refs (packed, as a clone writes them).
`--object-format` and `--ref-format` are `git init`'s (the mirror has the same formats); in a
reftable repository `--packed` compacts its tables.
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TEMPLATE_ULID = "01KBENCHTEMP1ATE0000000000"
TEMPLATE_HEX = "bea7c0ffee42"
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
IDENT = "Bench <bench@example.invalid> 1767225600 +0000"
ENV = dict(
    os.environ,
    LC_ALL="C",
    GIT_AUTHOR_NAME="Bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_AUTHOR_DATE="1767225600 +0000",
    GIT_COMMITTER_NAME="Bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
    GIT_COMMITTER_DATE="1767225600 +0000",
)


def ulid(i: int) -> str:
    """A canonical ULID: a timestamp i seconds after BASE_MS and 80 bits derived from i."""
    rand = int.from_bytes(hashlib.sha1(b"ulid%d" % i).digest()[:10], "big")
    value = ((BASE_MS + i * 1000) << 80) | rand
    return "".join(CROCKFORD[(value >> (5 * k)) & 31] for k in range(25, -1, -1))


def hex_id(i: int) -> str:
    return hashlib.sha1(b"hex%d" % i).hexdigest()[:12]


def git(*args, cwd=None, input=None, capture=True):
    r = subprocess.run(
        ["git", *args], cwd=cwd, input=input, env=ENV, check=True,
        stdout=subprocess.PIPE if capture else None,
    )
    return r.stdout


def template(store: str, transcript_bytes: int):
    """Writes one checkpoint with the product into a scratch repository; returns its files
    (path relative to the checkpoint root -> bytes) and its commit message."""
    tid = TEMPLATE_ULID if store == "git-refs" else TEMPLATE_HEX
    with tempfile.TemporaryDirectory() as d:
        git("init", "-q", "-b", "main", d)
        git("commit", "-q", "--allow-empty", "-m", "init", cwd=d)
        line = b'{"type":"assistant","text":"' + b"x" * 200 + b'"}\n'
        transcript = (line * (transcript_bytes // len(line) + 1))[:transcript_bytes]
        if not transcript.endswith(b"\n"):
            transcript = transcript[:-1] + b"\n"
        subprocess.run(
            ["git", "entire-checkpoint", "write", "-q", "--id", tid, "--session", "bench-session",
             "--transcript", "-", "--prompt", "benchmark prompt", "--agent", "Claude Code",
             "--created-at", "2026-01-01T00:00:00Z"],
            cwd=d, input=transcript, check=True, stdout=subprocess.DEVNULL,
            env=dict(ENV, ENTIRE_CHECKPOINTS_PRIMARY=store, ENTIRE_CHECKPOINTS_MIRRORS=""),
        )
        if store == "git-refs":
            ref, prefix = f"refs/entire/checkpoints/{tid[-2:]}/{tid}", ""
        else:
            ref, prefix = "refs/heads/entire/checkpoints/v1", f"{tid[:2]}/{tid[2:]}/"
        files = {}
        for entry in git("ls-tree", "-r", "-z", ref, cwd=d).split(b"\0"):
            if not entry:
                continue
            meta, path = entry.split(b"\t", 1)
            path = path.decode()
            assert path.startswith(prefix), path
            files[path[len(prefix):]] = git("cat-file", "blob", meta.split()[2].decode(), cwd=d)
        message = git("log", "-1", "--format=%B", ref, cwd=d).rstrip(b"\n") + b"\n"
    return tid, files, message


class Stream:
    """A fast-import stream: shared blobs once (by mark), per-checkpoint blobs inline."""

    def __init__(self, out):
        self.out = out
        self.marks = {}

    def data(self, payload: bytes):
        self.out.write(b"data %d\n" % len(payload))
        self.out.write(payload)
        self.out.write(b"\n")

    def shared_blob(self, payload: bytes) -> bytes:
        if payload not in self.marks:
            mark = b":%d" % (len(self.marks) + 1)
            self.out.write(b"blob\nmark " + mark + b"\n")
            self.data(payload)
            self.marks[payload] = mark
        return self.marks[payload]

    def commit(self, ref: str, message: bytes, entries):
        """A commit on `ref`: a root commit when `ref` is new in this stream, else a child of
        its last commit here, with `entries` added to that commit's tree."""
        # Blob commands cannot appear inside a commit: emit new shared blobs first.
        for _, payload, shared in entries:
            if shared:
                self.shared_blob(payload)
        self.out.write(b"commit " + ref.encode() + b"\n")
        self.out.write(b"author " + IDENT.encode() + b"\ncommitter " + IDENT.encode() + b"\n")
        self.data(message)
        for path, payload, shared in entries:
            if shared:
                self.out.write(b"M 100644 " + self.shared_blob(payload) + b" " + path.encode() + b"\n")
            else:
                self.out.write(b"M 100644 inline " + path.encode() + b"\n")
                self.data(payload)
        self.out.write(b"\n")


def checkpoint_entries(tid, files, cid, prefix):
    """The files of checkpoint `cid`: the template's with its ID (and its split v1 path) replaced."""
    out = []
    for path, payload in files.items():
        new = payload.replace(tid.encode(), cid.encode())
        new = new.replace(f"{tid[:2]}/{tid[2:]}".encode(), f"{cid[:2]}/{cid[2:]}".encode())
        out.append((prefix + path, new, new == payload))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("repo")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--store", choices=["git-refs", "git-branch", "both"], default="both")
    p.add_argument("--packed", action="store_true")
    p.add_argument("--remote")
    p.add_argument("--transcript-bytes", type=int, default=4096)
    p.add_argument("--object-format", choices=["sha1", "sha256"], default="sha1")
    p.add_argument("--ref-format", choices=["files", "reftable"], default="files")
    a = p.parse_args()
    if os.path.exists(a.repo):
        sys.exit(f"fixture: {a.repo} already exists")
    stores = ["git-refs", "git-branch"] if a.store == "both" else [a.store]
    formats = [f"--object-format={a.object_format}"]
    if a.ref_format != "files":
        formats.append(f"--ref-format={a.ref_format}")
    git("init", "-q", "-b", "main", *formats, a.repo)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=a.repo)
    git_dir = os.path.join(a.repo, ".git")
    fi = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=a.repo, env=ENV,
                          stdin=subprocess.PIPE)
    s = Stream(fi.stdin)
    for store in stores:
        tid, files, message = template(store, a.transcript_bytes)
        ids = [ulid(i) if store == "git-refs" else hex_id(i) for i in range(a.count)]
        with open(os.path.join(git_dir, f"bench-ids-{store}.txt"), "w") as f:
            f.write("".join(i + "\n" for i in ids))
        if store == "git-refs":
            for cid in ids:
                s.commit(f"refs/entire/checkpoints/{cid[-2:]}/{cid}",
                         message.replace(tid.encode(), cid.encode()),
                         checkpoint_entries(tid, files, cid, ""))
        else:
            branch = "refs/heads/entire/checkpoints/v1"
            s.commit(branch, b"Initialize sessions branch\n", [])
            # At most ~1,000 commits of history: one per checkpoint for small N.
            batch = max(1, a.count // 1000)
            for start in range(0, a.count, batch):
                chunk = ids[start:start + batch]
                entries = []
                for cid in chunk:
                    entries += checkpoint_entries(tid, files, cid, f"{cid[:2]}/{cid[2:]}/")
                s.commit(branch, message.replace(tid.encode(), chunk[-1].encode()), entries)
    fi.stdin.write(b"done\n")
    fi.stdin.close()
    if fi.wait() != 0:
        sys.exit("fixture: git fast-import failed")
    if a.packed:
        git("pack-refs", "--all", cwd=a.repo)
    if a.remote:
        clone = ["clone", "-q", "--mirror"]
        if a.ref_format != "files":
            clone.append(f"--ref-format={a.ref_format}")
        git(*clone, a.repo, a.remote, capture=False)


if __name__ == "__main__":
    main()
