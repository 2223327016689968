#!/usr/bin/env bash
# The real agents accept the configuration `enable --agent` writes, where an agent can say so
# without a model: Gemini CLI validates every settings file on every start, `gemini hooks --help`
# included (docs/agents.md). The agents (tests/agents.versions) are installed from npm into a
# cache when missing; where npm cannot be reached, a SKIPPED line says so. Codex, Claude Code,
# Copilot CLI and Droid have no check that runs without a model.
#
# Pi and Amp load our extension and plugin with no model either: `pi -p` with no API key still
# starts a session (its `session_start` and `session_shutdown` run our command), and `amp plugins
# exec` runs a plugin on an event of our making; the session is then staged.
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
# Checks that the real agent, run by `run` (in a fresh repository where `enable --agent $1` wrote
# our files, with $2 the npm prefix), stages a session through our hooks (`session list --json`
# matches $3); and that without our files it stages nothing (the check can fail).
staged_by() {
    local agent=$1 prefix=$2 sid=$3 repo
    for wired in yes no; do
        repo="$WORK/$agent-$wired"
        git init -q -b main "$repo"
        if [ "$wired" = yes ]; then
            (cd "$repo" && PATH="$BINS:$PATH" git-entire-checkpoint enable --agent "$agent" >/dev/null)
        fi
        (cd "$repo" && PATH="$BINS:$PATH" run "$prefix" >"$WORK/$agent.log" 2>&1) || true
        local staged
        staged="$(cd "$repo" && PATH="$BINS:$PATH" git-entire-checkpoint session list --json 2>/dev/null || true)"
        if [ "$wired" = yes ] && ! grep -Eq "$sid" <<<"$staged"; then
            echo "FAILED $agent: the real agent staged no session through our hooks:"
            tail -5 "$WORK/$agent.log"
            failed=1
            return
        elif [ "$wired" = no ] && grep -Eq "$sid" <<<"$staged"; then
            echo "FAILED $agent: a session was staged with no hooks of ours: the check proves nothing"
            failed=1
            return
        fi
    done
    echo "ok $agent runs our hooks as enable --agent $agent writes them"
}

export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"

pkg=@mariozechner/pi-coding-agent
ver="$(version_of "$pkg")"
prefix="$(install "$pkg" "$ver")"
if [ -z "$prefix" ]; then
    echo "SKIPPED pi: npm could not install $pkg@$ver ($(tail -1 "$WORK/npm.log"))"
else
    # No API key: Pi still starts the session (in its own store under HOME) before it gives up.
    run() { timeout 120 "$1/node_modules/.bin/pi" -p "hello" </dev/null; }
    staged_by pi "$prefix" '"agent": *"Pi"'
fi

pkg=@sourcegraph/amp
ver="$(version_of "$pkg")"
prefix="$(install "$pkg" "$ver")"
if [ -z "$prefix" ]; then
    echo "SKIPPED amp: npm could not install $pkg@$ver ($(tail -1 "$WORK/npm.log"))"
else
    # Amp's plugin runtime, on a session.start of a thread of ours: no account needed.
    run() {
        mkdir -p .amp/plugins
        timeout 120 "$1/node_modules/.bin/amp" plugins exec .amp/plugins/entire-checkpoints.ts \
            session.start --data '{"thread": {"id": "T-5f0c1d2e-0000-4000-8000-000000000001"}}' </dev/null
    }
    staged_by amp "$prefix" "T-5f0c1d2e-0000-4000-8000-000000000001"
fi
exit "$failed"
