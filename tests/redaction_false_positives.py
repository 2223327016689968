"""False positives of redaction on real transcripts: what the built-in rules replace in the
transcripts of the corpus (../shared/corpus), and that none of it is a code identifier, a hex
hash or commit ID, or a UUID. A code identifier is an unquoted value that reads as code (a dotted
path, a camelCase name, a call, a type or keyword); a plain word or a quoted literal given as a
password is a password, replaced on purpose, and counted apart.

Usage: redaction_false_positives.py BINARY CORPUS [BEFORE_BINARY]

Each distinct transcript blob of the bare repositories of CORPUS is written with `BINARY write`
into a scratch repository and read back with `git cat-file`; each `REDACTED` of a changed line
is matched against the original line to recover what it replaced. Prints how many of each kind
were replaced; with BEFORE_BINARY (an earlier build), only what that build did not replace,
each printed for review.
Exits 1 naming each replacement that is an identifier, a hash or a UUID.
"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches"))
from corpus_transcripts import Repo, repositories  # noqa: E402
from secrets_oracle import git, stored  # noqa: E402  (tests/ is on sys.path as this file's dir)

PLACEHOLDER = b"REDACTED"
KINDS = [
    ("uuid", re.compile(rb"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")),
    ("hex hash or commit", re.compile(rb"^[0-9a-f]{7,64}$")),
]
# Code, when not quoted (a quoted value is a literal, and a literal password in a test is a
# password): a dotted path, a camelCase name, a call, or a type or keyword of a language.
CODE = re.compile(
    rb"^(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*"
    rb"|[A-Za-z_$][\w$.]*\(.*"
    rb"|string|number|boolean|undefined|null|nil|None|true|false|await|any|str|int|bool)$")
# A plain word, counted apart: what a `.env` line or a shell gives as a password
# (`POSTGRES_PASSWORD=postgres`), replaced on purpose.
WORD = re.compile(rb"^[A-Za-z_]+$")


# Replacements of the corpus looked at and kept on purpose, by transcript blob (its first 12
# hex digits) and value, with why.
ACCEPTED = {
    # A random-looking value of a member whose name holds `token` (`"tokenSaverOutput":
    # "<32 hex>.json ..."`): the key-like rule takes 20 or more random characters under such a
    # name, and an API token is often 32 hex digits.
    ("65e1b3f9fa8e", b"07bb19aafdc849c1c0b327c16987e7cb"),
    ("72a06c2be369", b"07bb19aafdc849c1c0b327c16987e7cb"),
    # A prompt that names this UUID "a secret that was leaked".
    ("d7ffcf9a71f4", b"caa516d8-27ee-4fbd-a857-cf24b48e0b73"),
}


def kind(value, quoted):
    k = next((k for k, r in KINDS if r.match(value)), None)
    if k:
        return k
    if not quoted and CODE.match(value):
        return "code identifier"
    return "plain word" if WORD.match(value) else "other"


def replaced(original, redacted):
    """What each placeholder of `redacted` stands for in `original` (one line of each), with
    whether a quote is right before it."""
    pieces = redacted.split(PLACEHOLDER)
    out, at = [], 0
    if not original.startswith(pieces[0]):
        return out
    at = len(pieces[0])
    for k, piece in enumerate(pieces[1:], 2):
        last = k == len(pieces)
        # A placeholder is at least one byte of the original.
        end = len(original) - len(piece) if last else original.find(piece, at + 1)
        if end < 0:
            break
        out.append((original[at:end], at > 0 and original[at - 1:at] in (b'"', b"'")))
        at = end + len(piece)
    return out


def replacements(binary, repo, path, original):
    data = stored(binary, repo, path)
    found = []
    for old, new in zip(original.split(b"\n"), data.split(b"\n")):
        if old != new:
            found.extend(replaced(old, new))
    return found


def main():
    binary, corpus = os.path.abspath(sys.argv[1]), sys.argv[2]
    before = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    blobs = {}
    for path in repositories(corpus):
        r = Repo(path)
        for oid, _ in r.blobs:
            blobs.setdefault(oid, r)
    counts, suspicious, total = {}, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        git(tmp, "init", "-q", "-b", "main", repo)
        git(repo, "commit", "-q", "--allow-empty", "-m", "init")
        path = os.path.join(tmp, "t.jsonl")
        for oid in sorted(blobs):
            original = blobs[oid].read(oid)
            with open(path, "wb") as f:
                f.write(original)
            found = replacements(binary, repo, path, original)
            if before:
                old = replacements(before, repo, path, original)
                for s in old:
                    if s in found:
                        found.remove(s)
            for s, quoted in found:
                if s == PLACEHOLDER:
                    continue  # the original held the placeholder already
                total += 1
                if before:
                    print("redaction_false_positives: new: %s %r" % (oid.decode()[:12], s[:60]))
                k = kind(s, quoted)
                if (oid.decode()[:12], s) in ACCEPTED:
                    k = "accepted"
                counts[k] = counts.get(k, 0) + 1
                if k not in ("other", "plain word", "accepted"):
                    suspicious.append("%s: %s %r" % (oid.decode()[:12], k, s[:60]))
    for line in suspicious:
        print("redaction_false_positives: " + line, file=sys.stderr)
    print("redaction_false_positives: %d transcripts, %d replacements%s: %s" % (
        len(blobs), total, " new in this build" if before else "",
        ", ".join("%s %d" % kv for kv in sorted(counts.items())) or "none"))
    sys.exit(1 if suspicious else 0)


if __name__ == "__main__":
    main()
