#!/usr/bin/env bash
# Installs what the test suite runs for real, when it is missing (./test.sh runs this first):
# - the hook managers: pre-commit 4 (PyPI, in a virtualenv), husky 9 and lefthook 2 (npm), in a
#   tools directory outside the checkout ($ENTIRE_TEST_HOOK_TOOLS, else
#   ~/.cache/entire-checkpoints/hook-tools; the tests look there), and git-lfs 3 (Debian);
# - git's bash completion, zsh, fish and man (Debian), for the completion and man page tests;
# - OpenSSH's server and gitolite3 (Debian), which the server tests start as the test user;
# - Chromium (Debian), in which the report tests load the pages they make, headless;
# - the real agents the capture tests run offline (npm; tests/agents.versions).
# Quick when everything is there; fails loudly, naming what could not be installed. Debian
# packages need root: run as root, or with sudo that does not ask for a password, or install
# the packages it names yourself.
set -euo pipefail
tools=${ENTIRE_TEST_HOOK_TOOLS:-$HOME/.cache/entire-checkpoints/hook-tools}
mkdir -p "$tools"

fail() {
    echo "tests/tools.sh: $*" >&2
    exit 1
}

# Debian packages, when any of them is missing.
packages=()
git lfs version 2>/dev/null | grep -q '^git-lfs/3\.' || packages+=(git-lfs)
[ -f /usr/share/bash-completion/completions/git ] || packages+=(bash-completion)
command -v zsh >/dev/null || packages+=(zsh)
command -v fish >/dev/null || packages+=(fish)
command -v man >/dev/null || packages+=(man-db)
command -v script >/dev/null || packages+=(util-linux)
[ -x /usr/sbin/sshd ] || packages+=(openssh-server)
[ -x /usr/share/gitolite3/gitolite-shell ] || packages+=(gitolite3)
command -v chromium >/dev/null || packages+=(chromium)
if [ ${#packages[@]} -gt 0 ]; then
    echo "tests/tools.sh: installing ${packages[*]} (apt-get)"
    as_root=()
    if [ "$(id -u)" != 0 ]; then
        sudo -n true 2>/dev/null ||
            fail "these Debian packages are missing and installing them needs root: ${packages[*]}"
        as_root=(sudo -n)
    fi
    if ! "${as_root[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1; then
        "${as_root[@]}" apt-get update -qq || fail "apt-get update failed"
        "${as_root[@]}" apt-get install -y -qq "${packages[@]}" >/dev/null ||
            fail "apt-get install ${packages[*]} failed"
    fi
fi

if ! "$tools/venv/bin/pre-commit" --version 2>/dev/null | grep -q '^pre-commit 4\.'; then
    echo "tests/tools.sh: installing pre-commit 4 into $tools/venv"
    python3 -m venv "$tools/venv" || fail "python3 -m venv failed"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check 'pre-commit>=4,<5' ||
        fail "pip install pre-commit failed"
fi

npm_bin=$tools/npm/node_modules/.bin
husky_version() {
    node -p "require('$tools/npm/node_modules/husky/package.json').version" 2>/dev/null
}
if ! husky_version | grep -q '^9\.' ||
    ! "$npm_bin/lefthook" version 2>/dev/null | grep -q '^2\.'; then
    echo "tests/tools.sh: installing husky 9 and lefthook 2 into $tools/npm"
    mkdir -p "$tools/npm"
    # lefthook's package finds its binary in a platform sub-package (an optional dependency), so
    # no install script is needed, and none may run: lefthook's would run `lefthook install` in
    # the directory npm was started from. Both run in the tools directory for the same reason.
    (cd "$tools/npm" && npm install --prefix "$tools/npm" --ignore-scripts --no-fund --no-audit \
        --loglevel=error husky@9 lefthook@2) ||
        fail "npm install husky lefthook failed"
fi

# The real agents the capture tests run offline (tests/cli/real_agents/), each at the version
# tests/agents.versions pins, in a prefix of its own ($tools/agents/<package, / as +>@<version>),
# so that changing one pin installs that one. No install script runs (--ignore-scripts): the
# agents that ship a native binary carry it in a platform sub-package (an optional dependency).
agents=()
while read -r package version; do
    case $package in '' | '#'*) continue ;; esac
    prefix=$tools/agents/${package//\//+}@$version
    if [ ! -f "$prefix/node_modules/$package/package.json" ]; then
        echo "tests/tools.sh: installing $package $version into $prefix"
        mkdir -p "$prefix"
        (cd "$prefix" && npm install --prefix "$prefix" --ignore-scripts --no-fund --no-audit \
            --loglevel=error "$package@$version") || fail "npm install $package@$version failed"
    fi
    agents+=("$package $version")
done <"$(dirname "$0")/agents.versions"

echo "tests/tools.sh: $("$tools/venv/bin/pre-commit" --version), husky $(husky_version)," \
    "lefthook $("$npm_bin/lefthook" version), $(git lfs version | cut -d' ' -f1), zsh, fish, man," \
    "agents: $(IFS=,; echo "${agents[*]}")"
