#!/usr/bin/env bash
# The real agents accept the configuration `enable --agent` writes, where an agent can say so
# without a model: Gemini CLI validates every settings file on every start, `gemini hooks --help`
# included (docs/agents.md). The agents (tests/agents.versions) are installed from npm into a
# cache when missing; where npm cannot be reached, a SKIPPED line says so. Codex, Claude Code,
# Copilot CLI and Droid have no check that runs without a model.
#
# Usage: tests/agent_configs.sh   (ENTIRE_CORPUS_BINS=DIR: our binaries, default target/debug)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BINS="${ENTIRE_CORPUS_BINS:-$ROOT/target/debug}"
# Where tests/tools.sh installs the agents too.
CACHE="${ENTIRE_TEST_HOOK_TOOLS:-$HOME/.cache/entire-checkpoints/hook-tools}/agents"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Installs npm package $1 at version $2 into the cache; prints its prefix, or nothing when npm
# cannot install it.
install() {
    local prefix="$CACHE/${1//\//+}@$2"
    if [ ! -d "$prefix/node_modules" ]; then
        mkdir -p "$prefix"
        npm install --silent --no-audit --no-fund --prefix "$prefix" "$1@$2" >"$WORK/npm.log" 2>&1 ||
            { rm -rf "$prefix"; return 0; }
    fi
    echo "$prefix"
}

version_of() { awk -v p="$1" '$1 == p { print $2 }' "$ROOT/tests/agents.versions"; }

failed=0
pkg=@google/gemini-cli
ver="$(version_of "$pkg")"
prefix="$(install "$pkg" "$ver")"
if [ -z "$prefix" ]; then
    echo "SKIPPED gemini: npm could not install $pkg@$ver ($(tail -1 "$WORK/npm.log"))"
else
    export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
    mkdir -p "$HOME"
    git init -q -b main "$WORK/repo"
    # A settings file of the user's, with their own hook: ours goes in beside it.
    mkdir -p "$WORK/repo/.gemini"
    printf '{\n  "hooks": {\n    "AfterTool": [{"matcher": "write_file", "hooks": [{"name": "fmt", "type": "command", "command": "true"}]}]\n  }\n}\n' \
        > "$WORK/repo/.gemini/settings.json"
    (cd "$WORK/repo" && PATH="$BINS:$PATH" git-entire-checkpoint enable --agent gemini >/dev/null)
    check() { (cd "$WORK/repo" && timeout 120 "$prefix/node_modules/.bin/gemini" hooks --help 2>&1); }
    if check | grep -q "Invalid configuration"; then
        echo "FAILED gemini $ver refuses the settings enable --agent gemini wrote:"
        check | grep -A3 "Invalid configuration"
        failed=1
    else
        echo "ok gemini $ver accepts .gemini/settings.json as enable --agent gemini writes it"
    fi
    # The check can fail: a value of the wrong type is refused.
    sed -i 's/"type": "command",/"type": "command", "timeout": "soon",/' "$WORK/repo/.gemini/settings.json"
    if ! check | grep -q "Invalid configuration"; then
        echo "FAILED gemini $ver accepted a settings file it should refuse: the check proves nothing"
        failed=1
    fi
fi
exit "$failed"
