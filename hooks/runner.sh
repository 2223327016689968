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
            echo "warning: $bin_dir/$tool is gone; running $tool from PATH (run git entire-checkpoint hooks install again)" >&2
        "$tool" "$@"
    else
        return 127
    fi
}
