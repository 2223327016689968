#!/usr/bin/env python3
"""The conversation view over every transcript of a corpus repository (tests/corpus.sh).

Run in a clone of the repository ORIGIN: for every session of its v1 layouts whose transcript
is present, `show <id> --session <n> --transcript` as a terminal's pager gets it (the view) must
exit 0 and its last line must account for every entry of the stored transcript: as many entries
as it holds (non-empty lines; the messages or turns of a Gemini CLI, OpenCode or Kiro document),
each shown, bookkeeping or shown as stored (docs/cli.md, "Reading a transcript"). Prints the
tally per format. Usage: corpus_view.py ORIGIN NAME
"""

import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_tokens import sessions  # noqa: E402

FOOTER = re.compile(
    rb"-- transcript \(([a-z-]+|no known format)\): (\d+) (lines|messages|turns): (\d+) shown, "
    rb"(\d+) bookkeeping \(not shown\), (\d+) of no known shape")


def document(transcript):
    """The transcript as one JSON document, as the view reads one: a single line, or a first
    line that is not JSON on its own (pretty-printed); else None."""
    text = transcript.strip()
    if not text.startswith(b"{"):
        return None
    first = text.split(b"\n", 1)[0]
    if first != text:
        try:
            json.loads(first)
            return None  # JSON lines
        except ValueError:
            pass
    try:
        return json.loads(text)
    except ValueError:
        return None


def expected(transcript):
    """(entries, unit) of a stored transcript, as the view counts them."""
    doc = document(transcript)
    if isinstance(doc, dict):
        messages = doc.get("messages")
        if isinstance(messages, list) and (
                "sessionId" in doc or "projectHash" in doc
                or (messages and isinstance(messages[0], dict) and "type" in messages[0]
                    and "parts" not in messages[0])):
            return len(messages), b"messages"  # Gemini CLI
        if isinstance(doc.get("info"), dict) and isinstance(messages, list) and all(
                isinstance(m, dict) and "parts" in m for m in messages):
            return len(messages), b"messages"  # OpenCode
        if isinstance(doc.get("history"), list):
            return len(doc["history"]), b"turns"  # Kiro
    return sum(1 for line in transcript.split(b"\n") if line.strip(b" \t\r\n\x0c")), b"lines"


def view(cid, slot, env):
    """The view of session `slot` of checkpoint `cid`: (exit status, stdout's end, stderr)."""
    r = subprocess.run(["git", "entire-checkpoint", "--no-pager", "show", cid, "--session", slot,
                        "--transcript", "--no-fetch"], capture_output=True, env=env)
    return r.returncode, r.stdout[-4096:], r.stderr


def main():
    origin, name = sys.argv[1], sys.argv[2]
    env = dict(os.environ, GIT_PAGER_IN_USE="true")
    batch = subprocess.Popen(["git", "-C", origin, "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    runs = []
    # Two views at a time: each is one process reading one transcript.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for ref, sdir, _ in sessions(origin):
            batch.stdin.write(f"{ref}:{sdir}/full.jsonl\n".encode())
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if header[-1] == b"missing":
                continue  # absent from the snapshot
            want = expected(batch.stdout.read(int(header[2])))
            batch.stdout.read(1)
            shard, rest, slot = sdir.split("/")[-3:]
            runs.append((shard + rest, slot, want, pool.submit(view, shard + rest, slot, env)))
    batch.stdin.close()
    batch.wait()
    failures = 0
    tally = collections.Counter()
    for cid, slot, want, run in runs:
        code, out, err = run.result()
        found = FOOTER.search(out)
        if code != 0 or not found:
            failures += 1
            print(f"corpus: FAIL: view: {name} {cid} session {slot}: exit {code}: "
                  f"{err.decode(errors='replace')[-500:]}", file=sys.stderr)
            continue
        fmt, entries, unit, shown, bookkeeping, raw = found.groups()
        entries, shown, bookkeeping, raw = map(int, (entries, shown, bookkeeping, raw))
        if (entries, unit) != want or entries != shown + bookkeeping + raw:
            failures += 1
            print(f"corpus: FAIL: view: {name} {cid} session {slot}: the view accounts for "
                  f"{entries} {unit.decode()} ({shown} shown, {bookkeeping} bookkeeping, {raw} "
                  f"raw), the transcript holds {want[0]} {want[1].decode()}", file=sys.stderr)
            continue
        for key, n in (("sessions", 1), ("entries", entries), ("raw", raw),
                       ("bookkeeping", bookkeeping)):
            tally[(fmt.decode(), key)] += n
    for f in sorted({f for f, _ in tally}):
        print(f"corpus: view: {name}: {f}: {tally[(f, 'sessions')]} sessions, "
              f"{tally[(f, 'entries')]} entries, {tally[(f, 'bookkeeping')]} bookkeeping, "
              f"{tally[(f, 'raw')]} shown as stored")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
