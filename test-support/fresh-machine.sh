#!/usr/bin/env bash
# Runs a command as on a fresh machine with only a Rust toolchain and Debian's gcc (no
# gcc-multilib, g++, gperftools, perf, debuginfod, node, Chromium, Python, Go, Java),
# without touching the system: the command's PATH holds only symlinks to the base
# system's tools, gcc and binutils, and the Rust toolchain (~/.cargo/bin). Its gcc fails
# `-m32` and `-lprofiler` as gcc does without gcc-multilib and libgoogle-perftools-dev.
#
#   test-support/fresh-machine.sh cargo test --workspace
#
# Use a target directory of its own (CARGO_TARGET_DIR) to build from scratch as a fresh
# clone does: the build scripts then run with this PATH too.
set -euo pipefail
dir=$(mktemp -d "${TMPDIR:-/tmp}/fresh-path.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# Debian's essential packages (coreutils, dash, bash, tar, gzip, grep, sed, findutils,
# util-linux, perl-base, ...), gcc's driver and binutils.
for tool in sh bash dash env cat ls cp mv rm ln mkdir rmdir chmod touch readlink realpath \
    dirname basename head tail sort uniq tr wc cut sed grep awk mawk find xargs tar gzip \
    uname id date sleep true false test expr printf echo mktemp tee cmp diff mount umount \
    perl cpp as ld ld.bfd ar ranlib nm strip objcopy; do
    if p=$(command -v "$tool"); then
        ln -s "$p" "$dir/$tool"
    fi
done
real_gcc=$(command -v gcc)
cat >"$dir/gcc" <<EOF
#!/bin/sh
# gcc as installed without gcc-multilib and libgoogle-perftools-dev.
for a in "\$@"; do
    case "\$a" in
    -m32) echo "/usr/include/stdio.h:27:10: fatal error: bits/libc-header-start.h: No such file or directory (simulated: no gcc-multilib)" >&2; exit 1 ;;
    -lprofiler) echo "/usr/bin/ld: cannot find -lprofiler: No such file or directory (simulated: no libgoogle-perftools-dev)" >&2; exit 1 ;;
    esac
done
exec "$real_gcc" "\$@"
EOF
chmod +x "$dir/gcc"
ln -s gcc "$dir/cc"
PATH="$dir:$HOME/.cargo/bin" "$@"
