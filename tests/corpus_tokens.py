#!/usr/bin/env python3
"""Token usage from transcripts, checked against what the reference stored (tests/corpus.sh).

For a sample of the sessions of each agent in each corpus repository whose transcript is
present, the session is replayed the way an agent integration drives us, in a scratch repository
with the hooks installed: `session record` of the transcript as it was when the checkpoint's
window began (the first `checkpoint_transcript_start` entries) and a commit, then `session
record` of the whole transcript and a commit. The second checkpoint's `token_usage`, read with
`git cat-file`, is compared with the one the reference stored for the session:

- equal: the same figures;
- grown: every counter at least the reference's, and more model calls: the reference finalised
  the transcript after it condensed the checkpoint, so the stored transcript holds calls made
  after the figures were taken;
- older rule: Codex sessions of reference versions that counted cached input in
  `input_tokens` and reasoning in `output_tokens` (ours plus the cache equals theirs);
- none: the agent's transcripts record no usage (Cursor, Kiro, Droid): no `token_usage` is
  written, and the reference stored none or zeros;
- ours only: sessions of reference versions that stored no usage at all.

Reference 0.4 stored the transcript's length as `checkpoint_transcript_start` and counted the
whole transcript: such sessions (no entry past the start) are replayed from the start.

Anything else is a failure. Usage: corpus_tokens.py CORPUS_DIR WORK_DIR [PER_AGENT]
"""

import collections
import json
import os
import subprocess
import sys

COUNTERS = ["input_tokens", "cache_creation_tokens", "cache_read_tokens", "output_tokens",
            "api_call_count"]
LAYOUTS = ["refs/heads/entire/checkpoints/v1", "refs/entire/checkpoints/v1"]


def git(*args, cwd=None, data=None, check=True):
    r = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def sessions(repo):
    """(ref, session dir, metadata) of every session of the repository's v1 layouts."""
    for ref in LAYOUTS:
        if subprocess.run(["git", "-C", repo, "rev-parse", "-q", "--verify", ref],
                          capture_output=True).returncode:
            continue
        names = git("-C", repo, "ls-tree", "-r", "--name-only", ref).decode().split()
        held = set(names)
        metas = [n for n in names
                 if n.endswith("/metadata.json") and n.split("/")[-2].isdigit()
                 and n[:-len("metadata.json")] + "full.jsonl" in held]
        out = git("-C", repo, "cat-file", "--batch",
                  data="".join(f"{ref}:{n}\n" for n in metas).encode())
        at = 0
        for n in metas:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            if header[-1] == b"missing":
                at = end + 1
                continue
            size = int(header[2])
            yield ref, n.rsplit("/", 1)[0], json.loads(out[end + 1:end + 1 + size])
            at = end + 1 + size + 1


def document(transcript):
    """The transcript as one JSON document with messages (OpenCode, Gemini CLI), else None."""
    text = transcript.strip()
    if not (text.startswith(b"{") and b"\n" in text):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("messages"), list) else None


def lines(transcript):
    return [line for line in transcript.split(b"\n") if line.strip()]


def entries(transcript):
    """The entries of a transcript, as checkpoint_transcript_start counts them."""
    doc = document(transcript)
    return len(doc["messages"]) if doc else len(lines(transcript))


def head_of(transcript, start):
    """The transcript as it was when the window began: its first `start` entries."""
    doc = document(transcript)
    if doc:
        doc["messages"] = doc["messages"][:start]
        return json.dumps(doc, indent=2).encode() + b"\n"
    return b"\n".join(lines(transcript)[:start]) + b"\n"


def verdict(agent, ours, theirs):
    zero = not theirs or not any(theirs.get(k, 0) for k in COUNTERS)
    if ours is None:
        return "none" if zero else "missing"
    if not theirs:
        return "ours only"
    theirs = {k: theirs.get(k, 0) for k in COUNTERS}
    ours = {k: ours.get(k, 0) for k in COUNTERS}
    if ours == theirs:
        return "equal"
    if all(ours[k] >= theirs[k] for k in COUNTERS) and ours["api_call_count"] > theirs["api_call_count"]:
        return "grown"
    if agent == "Codex":
        older = dict(ours, input_tokens=ours["input_tokens"] + ours["cache_read_tokens"])
        same = all(older[k] == theirs[k] for k in ["input_tokens", "cache_read_tokens",
                                                    "api_call_count"])
        grew = all(older[k] >= theirs[k] for k in ["input_tokens", "cache_read_tokens"]) and \
            older["api_call_count"] > theirs["api_call_count"]
        if (same and theirs["output_tokens"] >= older["output_tokens"]) or grew:
            return "older rule"
    return "differs"


def replay(work, transcript, start):
    """The token_usage our hooks write for the window of `transcript` from entry `start`."""
    repo = os.path.join(work, "replay")
    if not os.path.isdir(repo):
        git("init", "-q", repo)
        git("commit", "-q", "--allow-empty", "-m", "root", cwd=repo)
        subprocess.run(["git", "entire-checkpoint", "enable", "--store", "git-refs"], cwd=repo,
                       check=True, capture_output=True)
    path = os.path.join(work, "transcript")
    sid = f"corpus-{os.urandom(6).hex()}"
    steps = ([head_of(transcript, start)] if start else []) + [transcript]
    for n, step in enumerate(steps):
        with open(path, "wb") as f:
            f.write(step)
        subprocess.run(["git", "entire-checkpoint", "session", "record", "--session", sid,
                        "--transcript", path], cwd=repo, check=True, capture_output=True)
        git("commit", "-q", "--allow-empty", "-m", f"step {n}", cwd=repo)
    message = git("log", "-1", "--format=%B", cwd=repo).decode()
    ids = [line.split(":", 1)[1].strip() for line in message.splitlines()
           if line.startswith("Entire-Checkpoint:")]
    if len(ids) != 1:
        raise RuntimeError(f"the replayed commit links {ids}")
    cid = ids[0]
    ref = f"refs/entire/checkpoints/{cid[-2:]}/{cid}"
    meta = json.loads(git("cat-file", "blob", f"{ref}:0/metadata.json", cwd=repo))
    return meta.get("token_usage")


def main():
    corpus, work = sys.argv[1], sys.argv[2]
    per_agent = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    failures = 0
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".git"):
            continue
        repo = os.path.join(corpus, name)
        taken = collections.Counter()
        tally = collections.Counter()
        for ref, sdir, meta in sessions(repo):
            agent = meta.get("agent") or "?"
            if taken[agent] >= per_agent:
                continue
            blob = subprocess.run(["git", "-C", repo, "cat-file", "blob", f"{ref}:{sdir}/full.jsonl"],
                                  capture_output=True)
            if blob.returncode != 0:
                continue  # absent from the snapshot
            taken[agent] += 1
            start = meta.get("checkpoint_transcript_start") or 0
            # Reference 0.4 wrote the transcript's length there and counted all of it.
            whole = start and start >= entries(blob.stdout)
            ours = replay(work, blob.stdout, 0 if whole else start)
            v = verdict(agent, ours, meta.get("token_usage"))
            if whole and v == "equal":
                v = "equal, counted from the start (reference 0.4)"
            tally[(agent, v)] += 1
            if v in ("missing", "differs"):
                failures += 1
                print(f"corpus: FAIL: tokens: {name} {ref}:{sdir} ({agent}, from entry {start}): "
                      f"ours {ours}, the reference's {meta.get('token_usage')}", file=sys.stderr)
        for (agent, v), n in sorted(tally.items()):
            print(f"corpus: tokens: {name}: {agent}: {n} {v}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
