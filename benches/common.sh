# Shared set-up of the benchmark scripts, sourced after ROOT is set: `. "$ROOT/benches/common.sh"
# TOOL`. Installs TOOL with apt-get when missing, builds the binaries (release unless
# BENCH_PROFILE=debug) and puts them first on PATH, makes a scratch dir WORK (removed on exit), a
# hermetic git environment (git-refs primary, no mirrors) and T, a 100 KB JSONL transcript.
command -v "$1" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq "$1" >/dev/null; }
# BENCH_PROFILE=debug (what `compare.sh --smoke` uses, so CI reuses the test build instead of
# compiling a release build only to check that every benchmark runs); release otherwise.
if [ "${BENCH_PROFILE:-release}" = debug ]; then
    cargo build --locked --quiet --manifest-path "$ROOT/Cargo.toml" --bins
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"
else
    cargo build --release --locked --quiet --manifest-path "$ROOT/Cargo.toml" --bins
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export PATH="$BIN:$PATH" HOME="$WORK" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.invalid
export ENTIRE_CHECKPOINTS_PRIMARY=git-refs ENTIRE_CHECKPOINTS_MIRRORS=
T="$WORK/transcript.jsonl"
python3 -c "
import sys
line = b'{\"type\":\"assistant\",\"text\":\"' + b'y' * 400 + b'\"}\n'
sys.stdout.buffer.write(line * (100 * 1024 // len(line)))" > "$T"
