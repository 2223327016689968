# Shared set-up of the benchmark scripts (sourced, not run): builds the release binaries, puts
# them first on PATH, and enters a scratch directory with a hermetic git environment, removed on
# exit. Sets ROOT, BIN and WORK.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bins
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export PATH="$BIN:$PATH" HOME="$WORK" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.invalid
export ENTIRE_CHECKPOINTS_PRIMARY=git-refs
cd "$WORK"
