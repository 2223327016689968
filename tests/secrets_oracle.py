"""detect-secrets and Betterleaks as outside oracles over the redaction evasion corpus.

Usage: secrets_oracle.py BINARY CORPUS_DIR

Each transcript of CORPUS_DIR is written with `BINARY write` into a fresh repository and read
back with `git cat-file`. Every secret detect-secrets or Betterleaks finds in the transcript must
be found nowhere in what was stored: neither its value as a substring of the stored bytes, nor
(detect-secrets) its hash among what it finds in them. Neither oracle decodes base64, so each
secret `secrets.tsv` lists for a transcript (the decoded secret of an encoded placement) must
be found neither in the stored bytes nor in any base64 run of its JSON strings, decoded at each
alignment. A transcript named `clean-*` must be stored byte for byte. Exits 1 naming each
failure.
"""

import base64
import binascii
import json
import os
import re
import subprocess
import sys
import tempfile

import betterleaks
from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings, transient_settings

# IPPublicDetector reports IP addresses, which are not credentials and which redaction keeps.
PLUGINS_OFF = {"IPPublicDetector"}
# The identifiers of the agent's own format (message, tool use and request ids) are random by
# design and no secret: excluded as detect-secrets' own `--exclude-secrets` would.
EXCLUDE_SECRETS = [r"^(msg|toolu|req)_[A-Za-z0-9]+$"]


def hermetic():
    return dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="oracle", GIT_AUTHOR_EMAIL="oracle@example.com",
               GIT_COMMITTER_NAME="oracle", GIT_COMMITTER_EMAIL="oracle@example.com",
               GIT_TERMINAL_PROMPT="0", LC_ALL="C")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], env=hermetic(), check=True,
                          capture_output=True).stdout


def stored(binary, repo, transcript):
    """Writes `transcript` as a checkpoint; returns the stored transcript's bytes."""
    out = subprocess.run([binary, "write", "-q", "--session", "oracle", "--transcript", transcript],
                         cwd=repo, env=hermetic(), check=True, capture_output=True,
                         text=True).stdout
    cid = out.strip()
    if len(cid) == 12:  # a hex ID: the git-branch store, a fresh repository's default
        path = "refs/heads/entire/checkpoints/v1:%s/%s/0/full.jsonl" % (cid[:2], cid[2:])
    else:
        path = "refs/entire/checkpoints/%s/%s:0/full.jsonl" % (cid[-2:], cid)
    return git(repo, "cat-file", "blob", path)


def findings(path):
    """detect-secrets' findings in the file at `path`: (secret value, secret hash) pairs."""
    with transient_settings({
        "plugins_used": [{"name": p} for p in plugin_names() if p not in PLUGINS_OFF],
        "filters_used": [{"path": "detect_secrets.filters.regex.should_exclude_secret",
                          "pattern": EXCLUDE_SECRETS}],
    }):
        secrets = SecretsCollection()
        secrets.scan_file(path)
    return {(s.secret_value, s.secret_hash) for _, s in secrets}


def betterleaks_findings(data):
    """The secret values Betterleaks (its default rules) finds in `data`."""
    return {f.match.value for f in betterleaks.scan_string(data.decode("utf-8", "replace"))}


def json_strings(data):
    """Every JSON string of `data` (JSONL lines, or one JSON document), nested ones decoded."""
    out = []

    def walk(v, depth):
        if isinstance(v, str):
            out.append(v)
            if depth > 0:
                try:
                    walk(json.loads(v), depth - 1)
                except ValueError:
                    pass
        elif isinstance(v, list):
            for x in v:
                walk(x, depth)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x, depth)

    try:
        docs = [json.loads(data)]
    except ValueError:
        docs = [json.loads(line) for line in data.splitlines() if line.strip()]
    for doc in docs:
        walk(doc, 4)
    return out


def base64_decoded(data):
    """What the base64 runs of the JSON strings of `data` decode to (wrapped runs joined), at
    each alignment: what `base64 -d` recovers from stored output."""
    out = []
    for s in json_strings(data):
        for run in re.findall(r"[A-Za-z0-9+/_-]{16,}={0,2}", re.sub(r"\s*\n\s*", "", s)):
            for skip in range(4):
                body = run[skip:].rstrip("=")
                body = body[:len(body) // 4 * 4]
                for alt in (b"+/", b"-_"):
                    try:
                        out.append(base64.b64decode(body, altchars=alt))
                    except (binascii.Error, ValueError):
                        pass
    return b"\n".join(out)


def planted(corpus):
    """secrets.tsv: each transcript's secrets, decoded."""
    out = {}
    with open(os.path.join(corpus, "secrets.tsv")) as f:
        for line in f:
            if not line.startswith("#") and "\t" in line:
                name, secret = line.rstrip("\n").split("\t", 1)
                out.setdefault(name, []).append(secret.encode())
    return out


def plugin_names():
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    return sorted(c.__name__ for c in get_mapping_from_secret_type_to_class().values())


def main():
    binary, corpus = os.path.abspath(sys.argv[1]), sys.argv[2]
    failures, found, found_bl = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        repo = os.path.join(tmp, "repo")
        git(tmp, "init", "-q", "-b", "main", repo)
        git(repo, "commit", "-q", "--allow-empty", "-m", "init")
        out_path = os.path.join(tmp, "stored.jsonl")
        names = sorted(n for n in os.listdir(corpus) if n.endswith((".jsonl", ".json")))
        secrets = planted(corpus)
        for name in names:
            path = os.path.abspath(os.path.join(corpus, name))
            data = stored(binary, repo, path)
            with open(path, "rb") as f:
                original = f.read()
            if name.startswith("clean-"):
                if data != original:
                    failures.append("%s: a transcript without secrets was changed" % name)
                continue
            with open(out_path, "wb") as f:
                f.write(data)
            before = findings(path)
            after_hashes = {h for _, h in findings(out_path)}
            found += len(before)
            for value, digest in sorted(before):
                if value.encode() in data or digest in after_hashes:
                    failures.append("%s: detect-secrets finds %r again in what is stored"
                                    % (name, value[:12] + "..."))
            leaked = betterleaks_findings(original)
            found_bl += len(leaked)
            again = betterleaks_findings(data)
            for value in sorted(leaked):
                if value.encode() in data or value in again:
                    failures.append("%s: Betterleaks finds %r again in what is stored"
                                    % (name, value[:12] + "..."))
            decoded = base64_decoded(data)
            for secret in secrets.get(name, []):
                if secret in data or secret in decoded:
                    failures.append("%s: secrets.tsv's %r is in what is stored, raw or base64"
                                    % (name, secret[:12].decode() + "..."))
    for f in failures:
        print("secrets_oracle: " + f, file=sys.stderr)
    print("secrets_oracle: %d transcripts, %d secrets found by detect-secrets, %d by Betterleaks, "
          "%d found again" % (len(names), found, found_bl, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
