"""detect-secrets as an outside oracle over the redaction evasion corpus.

Usage: secrets_oracle.py BINARY CORPUS_DIR

Each transcript of CORPUS_DIR is written with `BINARY write` into a fresh repository and read
back with `git cat-file`. Every secret detect-secrets finds in the transcript must be found
nowhere in what was stored: neither its value as a substring of the stored bytes, nor its hash
among what detect-secrets finds in them. A transcript named `clean-*` must be stored byte for
byte. Exits 1 naming each failure.
"""

import os
import subprocess
import sys
import tempfile

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


def plugin_names():
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    return sorted(c.__name__ for c in get_mapping_from_secret_type_to_class().values())


def main():
    binary, corpus = os.path.abspath(sys.argv[1]), sys.argv[2]
    failures, found = [], 0
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        repo = os.path.join(tmp, "repo")
        git(tmp, "init", "-q", "-b", "main", repo)
        git(repo, "commit", "-q", "--allow-empty", "-m", "init")
        out_path = os.path.join(tmp, "stored.jsonl")
        names = sorted(n for n in os.listdir(corpus) if n.endswith(".jsonl"))
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
    for f in failures:
        print("secrets_oracle: " + f, file=sys.stderr)
    print("secrets_oracle: %d transcripts, %d secrets found by detect-secrets, %d found again"
          % (len(names), found, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
