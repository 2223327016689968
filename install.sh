#!/bin/sh
# Builds entire-checkpoints in release mode, installs the three binaries and their man pages
# under $PREFIX (default ~/.local), and runs an end-to-end self-check in a scratch repository.
set -eu

PREFIX="${PREFIX:-$HOME/.local}"
SRC="$(cd "$(dirname "$0")" && pwd)"
BINS="git-entire-checkpoint git-entire-prepush git-entire-fetch"

# libgit2 is built with zlib-ng, whose build runs CMake (docs/decisions.md, "zlib-ng for the
# objects we write and read").
if ! command -v cmake >/dev/null; then
    echo "entire: building needs CMake (apt-get install cmake, brew install cmake, dnf install cmake)" >&2
    exit 1
fi
echo "entire: building (release)..."
# release.sh: statically linked on Linux with glibc, where the C toolchain can.
built="$("$SRC/release.sh")"

mkdir -p "$PREFIX/bin" "$PREFIX/share/man/man1" "$PREFIX/share/entire-checkpoints/hooks"
for b in $BINS; do
    install -m 0755 "$built/$b" "$PREFIX/bin/$b"
done
"$built/entire-checkpoints-man" "$PREFIX/share/man/man1"
# Completion, where each shell looks: bash-completion loads completions/<command> on first use,
# and git's bash completion asks it for git-<name> on `git <name> <TAB>`; zsh autoloads
# _<command> from site-functions (zsh's git completion calls _git-<name>); fish reads
# vendor_completions.d (its git completion delegates `git <name>` to git-<name>).
bash_dir="$PREFIX/share/bash-completion/completions"
zsh_dir="$PREFIX/share/zsh/site-functions"
fish_dir="$PREFIX/share/fish/vendor_completions.d"
mkdir -p "$bash_dir" "$zsh_dir" "$fish_dir"
for c in git-entire-checkpoint git-entire-fetch; do
    "$PREFIX/bin/git-entire-checkpoint" completion bash "$c" > "$bash_dir/$c"
    "$PREFIX/bin/git-entire-checkpoint" completion zsh "$c" > "$zsh_dir/_$c"
    "$PREFIX/bin/git-entire-checkpoint" completion fish "$c" > "$fish_dir/$c.fish"
done
for h in "$SRC"/hooks/*; do
    install -m 0755 "$h" "$PREFIX/share/entire-checkpoints/hooks/"
done
echo "entire: installed $BINS into $PREFIX/bin, man pages into $PREFIX/share/man/man1 and completions under $PREFIX/share"
# bash loads a script from completions/ only through the bash-completion package (Debian's
# and Homebrew's `bash-completion`); without it, say the one line that loads ours.
have_bash_completion=
for f in /usr/share/bash-completion/bash_completion /etc/bash_completion \
    /usr/local/share/bash-completion/bash_completion /opt/homebrew/etc/profile.d/bash_completion.sh \
    /usr/local/etc/profile.d/bash_completion.sh; do
    if [ -r "$f" ]; then have_bash_completion=1; fi
done
if [ -z "$have_bash_completion" ]; then
    echo "entire: note: bash completion needs the bash-completion package (not found); without it, add to ~/.bashrc after git's completion: source <(git entire-checkpoint completion bash)"
fi

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
