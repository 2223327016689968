#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests run for real when it is
# missing (tests/tools.sh: the hook managers, git-lfs, git's bash completion, zsh, fish, man),
# then runs `cargo test --locked` with every test required to run: a test whose tool is missing
# fails instead of skipping. Arguments go to cargo test (`./test.sh hook_managers`).
set -euo pipefail
cd "$(dirname "$0")"
tests/tools.sh
export ENTIRE_TEST_REQUIRE_TOOLS=1
exec cargo test --locked "$@"
