#!/usr/bin/env bash
# Runs every fuzz target (or the ones named as arguments) for a bounded time each.
#
#   fuzz/check.sh                      # every target, 60 s each
#   FUZZ_SECONDS=10 fuzz/check.sh      # shorter
#   fuzz/check.sh queue_line metadata  # some targets
#
# Needs cargo-fuzz (installed here when missing) and libFuzzer's nightly compiler flags, which
# RUSTC_BOOTSTRAP=1 allows on a stable toolchain. The committed seeds in fuzz/corpus/<target>
# are read but never written: what a run discovers goes to a temp dir that is deleted. A crash
# stops the script with a non-zero exit and leaves the input in fuzz/artifacts/<target>/.
# FUZZ_SANITIZER (default `none`: the library is safe Rust) is passed to `cargo fuzz --sanitizer`.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${FUZZ_SECONDS:-60}"
sanitizer="${FUZZ_SANITIZER:-none}"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for target in "${targets[@]}"; do
    echo "== fuzz $target (${seconds}s)"
    mkdir -p "$work/$target" "corpus/$target"
    cargo fuzz run --sanitizer "$sanitizer" "$target" "$work/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -max_len=4096 -print_final_stats=1
done
echo "fuzz: ${#targets[@]} target(s) ran ${seconds}s each without a failure"
