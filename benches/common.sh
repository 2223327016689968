# Shared set-up of the benchmark scripts, sourced after ROOT is set: `. "$ROOT/benches/common.sh"
# TOOL`. Installs TOOL with apt-get when missing, builds the binaries (release unless
# BENCH_PROFILE=debug) and puts them first on PATH, makes a scratch dir WORK (removed on exit), a
# hermetic git environment (git-refs primary, no mirrors), T, a 100 KB JSONL transcript, and the
# helpers below.
command -v "$1" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq "$1" >/dev/null; }
# BENCH_PROFILE=debug (what `compare.sh --smoke` uses, so CI reuses the test build instead of
# compiling a release build only to check that every benchmark runs); release otherwise.
# BENCH_BIN=DIR: the binaries of DIR instead (a copy of an earlier build, for before/after runs).
if [ -n "${BENCH_BIN:-}" ]; then
    BIN="$BENCH_BIN"
elif [ "${BENCH_PROFILE:-release}" = debug ]; then
    cargo build --locked --quiet --manifest-path "$ROOT/Cargo.toml" --bins
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"
else
    # What install.sh installs (release.sh: statically linked where it can be).
    BIN="$("$ROOT/release.sh" --quiet)"
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

# `$WORK/fresh FILE` appends a line no run wrote before to transcript FILE: its blob is new to
# the repository. A script, since benches/paired.py runs each preparation with sh.
cat > "$WORK/fresh" <<'EOF'
#!/bin/sh
printf '{"type":"user","message":{"role":"user","content":"run %s"}}\n' "$(date +%s%N)" >> "$1"
EOF
chmod +x "$WORK/fresh"

# The ref of checkpoint ID $1 in the git-refs store.
ref_of() { echo "refs/entire/checkpoints/${1: -2}/$1"; }

# The files of one checkpoint write of T, as written, under $WORK/objs: what
# benches/plumbing_write.sh writes again with git's plumbing (the write baseline).
write_objects_of_one_checkpoint() {
    git init -q -b main "$WORK/scratch"
    (
        cd "$WORK/scratch"
        git commit -q --allow-empty -m init
        id="$(git-entire-checkpoint write -q --session s --transcript "$T" --prompt p)"
        for f in metadata.json 0/metadata.json 0/full.jsonl 0/content_hash.txt 0/prompt.txt; do
            mkdir -p "$WORK/objs/$(dirname "$f")"
            git cat-file blob "$(ref_of "$id"):$f" > "$WORK/objs/$f"
        done
    )
}

# Instructions executed by "$@" and every process it starts (valgrind's callgrind; the scripts
# that call it source this file with valgrind as TOOL). Summed from one profile file per
# process: a child whose stderr its parent captures (our binaries capture git's) reports its
# count there, not to the terminal.
instructions() {
    local d
    d="$(mktemp -d)"
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$d/%p" "$@" \
        >/dev/null 2>&1 || true
    awk '/^(summary|totals):/ { s += $2; nextfile } END { printf "%.0f\n", s }' "$d"/*
    rm -rf "$d"
}

# make_transcripts DIR NAME=BYTES...: a transcript DIR/NAME.jsonl of about BYTES for each pair.
# With CORPUS set (the corpus of real checkpoint data), made of its real sessions
# (benches/corpus_transcripts.py), from a copy under WORK that CORPUS then names (the corpus's
# repositories have no refs/ folder, which git wants, and may be read-only); else generated
# JSONL of an assistant's messages.
make_transcripts() {
    local dir="$1" s
    shift
    mkdir -p "$dir"
    if [ -n "${CORPUS:-}" ]; then
        cp -r "$CORPUS" "$WORK/corpus"
        CORPUS="$WORK/corpus"
        for r in "$CORPUS"/*.git; do mkdir -p "$r/refs"; done
        python3 "$ROOT/benches/corpus_transcripts.py" "$CORPUS" "$dir" "$@" >&2
        return
    fi
    for s in "$@"; do
        python3 - "$dir/${s%%=*}.jsonl" "${s#*=}" <<'EOF'
import json, sys
path, size = sys.argv[1], int(sys.argv[2])
out, n = [], 0
while sum(map(len, out)) < size:
    out.append(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": f"Step {n}: I read src/lib.rs and ran the tests; they pass. " * 3}]},
        "usage": {"input_tokens": n, "output_tokens": 42}}) + "\n")
    n += 1
open(path, "w").write("".join(out))
EOF
    done
}
