#!/usr/bin/env python3
"""Attribution of `blame` on real history: clones git-sync.git from the corpus directory given
as the first argument (with its checkpoint refs and v1 branch), runs
`git entire-checkpoint blame --json --no-fetch` over every Go file at `main`, and reports the
shares of lines labelled agent / commit-linked / human, the checkpoints linked and how many
lacked transcripts (absent blobs). With `--why N` it also prints N `why` answers of
agent-written lines, spread over the files, for checking by hand against the transcripts.

With `--agents` it reads every repository of the corpus instead, the way a teammate would: a
fresh `git clone` of a copy, default settings (reads fetch what the clone lacks, such as the
checkpoints v2 refs, from that copy), and `blame --json` of every file that a commit linking
checkpoints (the reference's trailer rule) touched, at the tip of each branch holding that
commit. It prints one line per file that did not exit 0, then one row per transcript format:
sessions linked, transcripts read, sessions whose transcript shows writes of a blamed file, and
the lines labelled agent by that format's writes (a line blamed on several branches counts
once).

usage: benches/blame_corpus.py <corpus-dir> [--bin <git-entire-checkpoint>] [--why N | --agents]
(default binary: target/release/git-entire-checkpoint; build it with cargo build --release)
"""

import argparse
import collections
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def run(args, cwd, check=True):
    out = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {out.stderr}")
    return out


def clone_git_sync(corpus, tmp):
    """A clone of the corpus's git-sync.git in `tmp`, with its checkpoint refs and v1 branch."""
    src = os.path.join(os.path.abspath(corpus), "git-sync.git")
    repo = os.path.join(tmp, "git-sync")
    # A local clone copies the objects as they are: blobs absent from the snapshot stay
    # absent, as in a partial clone.
    run(["git", "clone", "-q", src, repo], tmp)
    run(["git", "fetch", "-q", "origin", "refs/entire/*:refs/entire/*",
         "+refs/heads/entire/checkpoints/v1:refs/heads/entire/checkpoints/v1"], repo)
    return repo


def main():
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "git-entire-checkpoint"))
    p.add_argument("--why", type=int, default=0)
    p.add_argument("--agents", action="store_true")
    a = p.parse_args()
    binary = os.path.abspath(a.bin)
    if a.agents:
        return agents(os.path.abspath(a.corpus), binary)
    with tempfile.TemporaryDirectory(prefix="blame-corpus") as tmp:
        repo = clone_git_sync(a.corpus, tmp)
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


# The reference's trailer rule (docs/format.md, "Trailers"): anywhere in the message.
TRAILER = re.compile(r"Entire-Checkpoint:[\t\n\x0c\r ]*([0-9a-f]{12}|[0-7][0-9A-HJKMNP-TV-Z]{25})(?:[\t\n\x0c\r ]|$)")


@functools.cache
def text_files(repo, rev):
    """The text files of `rev` (git grep -I skips binary ones; empty ones have no line)."""
    out = run(["git", "grep", "-I", "-z", "--name-only", "-e", "", rev], repo, check=False)
    return {n.removeprefix(rev + ":") for n in out.stdout.split("\0") if n}


def linked_files(repo):
    """[(commit, file)] to blame: each text file a linked commit touched, at the tip of each
    branch holding that commit, or at the last linked commit that wrote it when the tip no
    longer has it (a session's writes may have been deleted since)."""
    branches = run(["git", "for-each-ref", "--format=%(refname)", "refs/remotes/origin/"],
                   repo).stdout.split()
    branches = [b for b in branches if b != "refs/remotes/origin/HEAD" and "/entire/" not in b]
    pairs = set()
    for b in branches:
        tip = run(["git", "rev-parse", b], repo).stdout.strip()
        log = run(["git", "log", "-z", "--format=%x01%H%x02%B%x02", "--name-only", "--no-renames",
                   "--diff-filter=AMT", b], repo).stdout
        last = {}
        for record in log.split("\x01")[1:]:
            commit, message, names = record.split("\x02")
            if TRAILER.search(message):
                for n in names.strip("\n\0").split("\0"):
                    last.setdefault(n, commit)
        # Text files (git grep -I skips binary ones, and empty ones have no line to blame).
        at_tip = text_files(repo, tip)
        for f, commit in last.items():
            if f in at_tip:
                pairs.add((tip, f))
            elif f in text_files(repo, commit):
                pairs.add((commit, f))
    return sorted(pairs)


def agents(corpus, binary):
    rows = collections.defaultdict(lambda: {"sessions": set(), "read": set(), "writing": set(), "agent": set()})
    failed = []
    blamed = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="blame-agents") as tmp:
        for name in sorted(os.listdir(corpus)):
            if not name.endswith(".git"):
                continue
            copy = os.path.join(tmp, name)
            shutil.copytree(os.path.join(corpus, name), copy, symlinks=True)
            repo = os.path.join(tmp, name[:-4])
            run(["git", "clone", "-q", copy, repo], tmp)
            for rev, f in linked_files(repo):
                out = run([binary, "blame", f, rev, "--json"], repo, check=False)
                blamed += 1
                if out.returncode != 0 or not out.stdout:
                    failed.append((name[:-4], rev, f, out.returncode, out.stderr.strip()[:300]))
                    continue
                doc = json.loads(out.stdout)
                formats = {}
                for c in doc["checkpoints"]:
                    for s in c["sessions"]:
                        key = (name, c["checkpoint_id"], s["session_index"])
                        fmt = s.get("format", f"({s['transcript']})")
                        formats[(c["checkpoint_id"], s["session_index"])] = fmt
                        rows[fmt]["sessions"].add(key)
                        if s["transcript"] == "read":
                            rows[fmt]["read"].add(key)
                        if s["writes"] > 0:
                            rows[fmt]["writing"].add(key)
                filename = {c["commit"]: c["filename"] for c in doc["commits"]}
                seen = collections.Counter()
                for line in doc["lines"]:
                    if line["attribution"] != "agent":
                        continue
                    w = line["write"]
                    # The same line of the same commit, whichever branch it was blamed on.
                    ident = (name, line["commit"], filename[line["commit"]], line["text"])
                    seen[ident] += 1
                    fmt = formats[(w["checkpoint_id"], w["session_index"])]
                    rows[fmt]["agent"].add(ident + (seen[ident],))
    print(f"{blamed} files blamed over every branch of every repository in {time.monotonic() - started:.1f}s")
    for f in failed:
        print(f"failed: {f}")
    for fmt in sorted(rows):
        r = rows[fmt]
        print(f"format {fmt} sessions {len(r['sessions'])} read {len(r['read'])} "
              f"writing {len(r['writing'])} agent_lines {len(r['agent'])}")


if __name__ == "__main__":
    main()
