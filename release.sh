#!/bin/sh
# Builds the release binaries as install.sh installs them and prints the directory that holds
# them; arguments are passed to cargo (e.g. --quiet). Used by install.sh and by the benchmarks,
# so that what is measured is what users run.
#
# On Linux with glibc the binaries are linked statically, as position-independent executables
# (static-pie: the address randomisation and read-only relocations of a PIE are kept): each
# start then skips the dynamic loader's work, about a third of a short command's instructions
# (docs/decisions.md, "Statically linked on glibc"). The C toolchain must be able to link such
# a program (glibc's static libraries: libc6-dev on Debian and Ubuntu, glibc-static on Fedora);
# when it cannot, the binaries are linked dynamically, and this says so.
set -eu

SRC="$(cd "$(dirname "$0")" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$SRC/target}"
host="$(rustc -vV | sed -n 's/^host: //p')"

links_static_pie() {
    tmp="$(mktemp -d)"
    printf 'int main(void) { return 0; }\n' >"$tmp/t.c"
    ok=0
    "${CC:-cc}" -static-pie -o "$tmp/t" "$tmp/t.c" >/dev/null 2>&1 && "$tmp/t" && ok=1
    rm -rf "$tmp"
    [ "$ok" = 1 ]
}

case "$host" in
*-linux-gnu*)
    if links_static_pie; then
        # An explicit --target keeps the flag off what runs on the build machine (build
        # scripts and proc-macros, which cannot be static), and puts the binaries in a
        # directory of their own.
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --release --locked --manifest-path "$SRC/Cargo.toml" --bins \
            --target "$host" "$@" >&2
        echo "$target_dir/$host/release"
        exit 0
    fi
    echo "entire: note: the C compiler cannot link a static program (glibc's static libraries are missing: libc6-dev, glibc-static); building dynamically linked binaries, which start slower" >&2
    ;;
esac
cargo build --release --locked --manifest-path "$SRC/Cargo.toml" --bins "$@" >&2
echo "$target_dir/release"
