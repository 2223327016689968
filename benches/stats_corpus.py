#!/usr/bin/env python3
"""`stats` on real history, against the reference's own measure: clones the corpus's
git-sync.git (as blame_corpus.py does), runs `git entire-checkpoint stats main --json
--no-fetch` over all of `main`'s history, and compares, commit by commit, the share of added
lines `stats` gives to agents (blame's rule: the transcripts' file-writing tool calls) with the
share the reference recorded when it wrote the checkpoint (`initial_attribution` in each
session's metadata.json: `agent_lines` of `total_committed`, measured from its snapshots of the
working tree, not from the transcript). Only commits whose checkpoints and transcripts were all
read are compared (the snapshot lacks many transcript blobs; a commit without them has no agent
line by construction).

usage: benches/stats_corpus.py <corpus-dir> [--bin <git-entire-checkpoint>]
(default binary: target/release/git-entire-checkpoint)
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blame_corpus import clone_git_sync, run  # noqa: E402


def recorded(binary, repo, checkpoint):
    """The reference's `initial_attribution` for the commit of `checkpoint` (every session of
    a checkpoint records the same one), or None."""
    out = run([binary, "cat", checkpoint, "metadata.json", "--no-fetch"], repo, check=False)
    if out.returncode != 0:
        return None
    for n in range(len(json.loads(out.stdout).get("sessions", []))):
        out = run([binary, "cat", checkpoint, f"{n}/metadata.json", "--no-fetch"], repo, check=False)
        if out.returncode == 0:
            a = json.loads(out.stdout).get("initial_attribution")
            if a and a.get("total_committed"):
                return a
    return None


def blank_lines(repo, commit):
    """How many lines `commit` adds that have no letter or digit (blank, `}`): never evidence
    for blame's rule, always counted by the reference."""
    out = run(["git", "show", "--format=", "-U0", "--no-color", "--no-ext-diff", commit], repo)
    return sum(1 for l in out.stdout.splitlines()
               if l.startswith("+") and not l.startswith("+++")
               and not any(ch.isalnum() for ch in l[1:]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "git-entire-checkpoint"))
    a = p.parse_args()
    binary = os.path.abspath(a.bin)
    with tempfile.TemporaryDirectory(prefix="stats-corpus") as tmp:
        repo = clone_git_sync(a.corpus, tmp)
        out = run([binary, "stats", "main", "--json", "--no-fetch"], repo, check=False)
        if out.returncode not in (0, 1) or not out.stdout:
            sys.exit(f"stats failed ({out.returncode}): {out.stderr[:500]}")
        doc = json.loads(out.stdout)
        whole = {c["checkpoint_id"]: c["status"] == "read" and c["sessions"]
                 and all(s["transcript"] == "read" for s in c["sessions"])
                 for c in doc["checkpoints"]}
        t = doc["total"]
        linked = [c for c in doc["commits"] if c["checkpoints"]]
        print(f"{len(doc['commits'])} commits, {t['added']} lines added: agent {t['agent_written']}"
              f" ({100 * t['ai_share']:.1f}%), commit-linked {t['commit_linked']}, human {t['human']};"
              f" {len(linked)} commits link checkpoints")
        rows = []
        for c in linked:
            if not all(whole.get(cp) for cp in c["checkpoints"]) or not c["added"]:
                continue
            ref = recorded(binary, repo, c["checkpoints"][-1])
            if ref is None:
                continue
            rows.append((c, ref))
        blanks = {c["commit"]: blank_lines(repo, c["commit"]) for c, _ in rows}
        blank = sum(blanks.values())
        ours = sum(c["agent_written"] for c, _ in rows)
        added = sum(c["added"] for c, _ in rows)
        ref_agent = sum(r["agent_lines"] for _, r in rows)
        ref_total = sum(r["total_committed"] for _, r in rows)
        diffs = [abs(c["ai_share"] - min(r["agent_lines"] / r["total_committed"], 1.0)) for c, r in rows]
        within = sum(1 for d in diffs if d <= 0.10)
        print(f"compared (every transcript read, a recorded attribution): {len(rows)} commits")
        print(f"  stats:     {ours} agent lines of {added} added = {100 * ours / max(added, 1):.1f}%")
        print(f"  stats, of the {added - blank} added lines with a letter or digit: {100 * ours / max(added - blank, 1):.1f}%")
        print(f"  reference: {ref_agent} agent lines of {ref_total} committed = {100 * ref_agent / max(ref_total, 1):.1f}%")
        for name, pick in (("reference 100% agent", lambda r: r["agent_lines"] >= r["total_committed"]),
                           ("reference 0% agent", lambda r: r["agent_lines"] == 0),
                           ("reference between", lambda r: 0 < r["agent_lines"] < r["total_committed"])):
            part = [(c, r) for c, r in rows if pick(r)]
            o = sum(c["agent_written"] for c, _ in part)
            ad = sum(c["added"] for c, _ in part)
            ev = ad - sum(blanks[c["commit"]] for c, _ in part)
            ra = sum(r["agent_lines"] for _, r in part)
            rt = sum(r["total_committed"] for _, r in part)
            print(f"    {name}: {len(part)} commits, stats {o} = {100 * o / max(ad, 1):.1f}% of {ad}"
                  f" ({100 * o / max(ev, 1):.1f}% of the {ev} with a letter or digit),"
                  f" reference {100 * ra / max(rt, 1):.1f}% of {rt}")
        if diffs:
            print(f"  per commit: mean |difference| {100 * sum(diffs) / len(diffs):.1f} points;"
                  f" within 10 points: {within} of {len(rows)}")


if __name__ == "__main__":
    main()
