#!/bin/sh
# Builds entire-checkpoints in release mode, installs the three binaries and their man pages
# under $PREFIX (default ~/.local), and runs an end-to-end self-check in a scratch repository.
set -eu

PREFIX="${PREFIX:-$HOME/.local}"
SRC="$(cd "$(dirname "$0")" && pwd)"
BINS="git-entire-checkpoint git-entire-prepush git-entire-fetch"

echo "entire: building (release)..."
cargo build --release --locked --manifest-path "$SRC/Cargo.toml" --bins

mkdir -p "$PREFIX/bin" "$PREFIX/share/man/man1" "$PREFIX/share/entire-checkpoints/hooks"
target_dir="${CARGO_TARGET_DIR:-$SRC/target}"
for b in $BINS; do
    install -m 0755 "$target_dir/release/$b" "$PREFIX/bin/$b"
done
"$target_dir/release/entire-checkpoints-man" "$PREFIX/share/man/man1"
for h in "$SRC"/hooks/*; do
    install -m 0755 "$h" "$PREFIX/share/entire-checkpoints/hooks/"
done
echo "entire: installed $BINS into $PREFIX/bin and man pages into $PREFIX/share/man/man1"

case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) echo "entire: note: $PREFIX/bin is not on your PATH; add it, e.g.: export PATH=\"$PREFIX/bin:\$PATH\"" ;;
esac

# Self-check: write a checkpoint in a scratch repository through `git entire-checkpoint`, read
# it back, and check the ref with git itself. Hermetic: no user or system git config is read.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT INT TERM
(
    cd "$scratch"
    export PATH="$PREFIX/bin:$PATH" HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
    export GIT_AUTHOR_NAME="Self Check" GIT_AUTHOR_EMAIL="self-check@example.invalid"
    export GIT_COMMITTER_NAME="Self Check" GIT_COMMITTER_EMAIL="self-check@example.invalid"
    export ENTIRE_CHECKPOINTS_PRIMARY=git-refs
    git init -q repo
    cd repo
    git commit -q --allow-empty -m "self-check"
    printf '{"type":"user","text":"hello"}\n' > transcript.jsonl
    id="$(git entire-checkpoint write --session self-check --transcript transcript.jsonl --prompt hello)"
    git entire-checkpoint cat "$id" 0/full.jsonl | cmp -s - transcript.jsonl
    git for-each-ref --format='%(refname)' refs/entire/checkpoints/ | grep -q "/$id\$"
    git entire-checkpoint show "$id" --json >/dev/null
    # The whole story: hooks, a staged session, a commit, a push, a clone reading it back.
    git entire-checkpoint demo >/dev/null
) || { echo "entire: self-check FAILED" >&2; exit 1; }
echo "entire: self-check passed"
