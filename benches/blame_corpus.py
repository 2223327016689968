#!/usr/bin/env python3
"""Attribution of `blame` on real history: clones git-sync.git from the corpus directory given
as the first argument (with its checkpoint refs and v1 branch), runs
`git entire-checkpoint blame --json --no-fetch` over every Go file at `main`, and reports the
shares of lines labelled agent / commit-linked / human, the checkpoints linked and how many
lacked transcripts (absent blobs). With `--why N` it also prints N `why` answers of
agent-written lines, spread over the files, for checking by hand against the transcripts.

usage: benches/blame_corpus.py <corpus-dir> [--bin <git-entire-checkpoint>] [--why N]
(default binary: target/release/git-entire-checkpoint; build it with cargo build --release)
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time


def run(args, cwd, check=True):
    out = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {out.stderr}")
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "git-entire-checkpoint"))
    p.add_argument("--why", type=int, default=0)
    a = p.parse_args()
    binary = os.path.abspath(a.bin)
    src = os.path.join(os.path.abspath(a.corpus), "git-sync.git")
    with tempfile.TemporaryDirectory(prefix="blame-corpus") as tmp:
        repo = os.path.join(tmp, "git-sync")
        # A local clone copies the objects as they are: blobs absent from the snapshot stay
        # absent, as in a partial clone.
        run(["git", "clone", "-q", src, repo], tmp)
        run(["git", "fetch", "-q", "origin", "refs/entire/*:refs/entire/*",
             "+refs/heads/entire/checkpoints/v1:refs/heads/entire/checkpoints/v1"], repo)
        files = run(["git", "ls-tree", "-r", "--name-only", "main"], repo).stdout.split()
        files = [f for f in files if f.endswith(".go")]
        counts = collections.Counter()
        checkpoints = {}
        failed = []
        agent_lines = []
        started = time.monotonic()
        for f in files:
            out = run([binary, "blame", f, "main", "--json", "--no-fetch"], repo, check=False)
            if out.returncode not in (0, 1) or not out.stdout:
                failed.append((f, out.returncode, out.stderr.strip()[:200]))
                continue
            doc = json.loads(out.stdout)
            for label, n in doc["counts"].items():
                counts[label] += n
            for c in doc["checkpoints"]:
                checkpoints[c["checkpoint_id"]] = c
            agent_lines += [(f, l["line"]) for l in doc["lines"] if l["attribution"] == "agent"]
        elapsed = time.monotonic() - started
        total = sum(counts.values())
        print(f"{len(files)} Go files, {total} lines at main, blamed in {elapsed:.1f}s")
        for label in ("agent", "commit_linked", "human", "uncommitted"):
            n = counts[label]
            print(f"  {label:<14} {n:>6}  {100 * n / max(total, 1):5.1f}%")
        statuses = collections.Counter(c["status"] for c in checkpoints.values())
        sessions = [s for c in checkpoints.values() for s in c["sessions"]]
        transcripts = collections.Counter(s["transcript"] for s in sessions)
        lacking = sum(1 for c in checkpoints.values()
                      if c["status"] == "read" and c["sessions"]
                      and all(s["transcript"] != "read" for s in c["sessions"]))
        print(f"checkpoints linked: {len(checkpoints)} ({dict(statuses)})")
        print(f"sessions: {len(sessions)}, transcripts: {dict(transcripts)}")
        print(f"checkpoints read with no transcript readable (absent blobs): {lacking}")
        if failed:
            print(f"files that failed: {failed}")
        if a.why and agent_lines:
            step = max(len(agent_lines) // a.why, 1)
            for f, line in agent_lines[::step][: a.why]:
                out = run([binary, "why", f"{f}:{line}", "main", "--no-fetch"], repo, check=False)
                print("\n" + out.stdout.rstrip())


if __name__ == "__main__":
    main()
