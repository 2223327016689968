# Runs our binary git-entire-$1 with the rest of the arguments: from the directory
# `hooks install` ran from (GUI git clients, IDEs and cron run hooks without the user's PATH),
# else from PATH, with a warning that it moved; returns 127 when neither has it.
bin_dir=@BIN_DIR@
entire() {
    tool=git-entire-$1
    shift
    if [ -n "$bin_dir" ] && [ -x "$bin_dir/$tool" ]; then
        "$bin_dir/$tool" "$@"
    elif command -v "$tool" >/dev/null 2>&1; then
        [ -n "$bin_dir" ] &&
            echo "entire: warning: $bin_dir/$tool is gone; running $tool from PATH (run git entire-checkpoint hooks install again)" >&2
        "$tool" "$@"
    else
        return 127
    fi
}
# Whether our binary left the marker $1 (in <git common dir>/entire/) saying that this hook has
# nothing to do, and it still holds (and no checkpoint a commit links is left to write): it is newer than everything that could change that (the
# hooks directory and our hooks, which another tool may have displaced, git's configuration,
# the checkpoint settings). Shell builtins only: this is what a hook with nothing to do costs.
# Sets gd (this worktree's git dir) and common. Where anything is uncertain (no marker, a git
# dir that is a file, configuration given on the command line), the binary runs.
entire_idle() {
    [ -z "${GIT_CONFIG_PARAMETERS-}${GIT_CONFIG_COUNT-}${GIT_COMMON_DIR-}${GIT_WORK_TREE-}" ] || return 1
    if [ -n "${GIT_DIR-}" ]; then
        # git sets it, absolute, for a linked worktree's hooks; a relative one the user set
        # leaves where the working tree is to git's rules.
        case $GIT_DIR in /*) gd=$GIT_DIR ;; *) return 1 ;; esac
    elif [ -d .git ]; then
        gd=.git
    else
        return 1
    fi
    common=$gd
    if [ -f "$gd/commondir" ]; then
        read -r common <"$gd/commondir" || [ -n "$common" ] || return 1
        case $common in /*) ;; *) common=$gd/$common ;; esac
    fi
    # A checkpoint a commit's trailer names that its post-commit did not write: the binary
    # writes it first thing (a commit or a push).
    [ ! -e "$gd/entire-promised-checkpoint" ] || return 1
    marker=$common/entire/$1
    [ -f "$marker" ] || return 1
    for f in "$hook_dir" "$hook_dir/pre-push" "$hook_dir/prepare-commit-msg" \
        "$hook_dir/post-commit" "$hook_dir/post-rewrite" "$hook_dir/pre-auto-gc" \
        "$common/config" "$gd/config.worktree" \
        "${GIT_CONFIG_GLOBAL:-${HOME-}/.gitconfig}" "${XDG_CONFIG_HOME:-${HOME-}/.config}/git/config" \
        "${GIT_CONFIG_SYSTEM:-/etc/gitconfig}" .entire/settings.json .entire/settings.local.json \
        "$common/entire/settings.local.json"; do
        [ ! -e "$f" ] || [ "$marker" -nt "$f" ] || return 1
    done
}
# The commit HEAD names, from its loose ref (fails where it is packed, or in a reftable). A
# file that may be missing is read with 2>/dev/null first: redirections apply left to right,
# and one that fails reports it before a later 2>/dev/null would silence it.
entire_head() {
    read -r head <"$gd/HEAD" || return 1
    case $head in
        "ref: "*) read -r head 2>/dev/null <"$common/${head#ref: }" || return 1 ;;
    esac
}
