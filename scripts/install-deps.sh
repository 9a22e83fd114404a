#!/usr/bin/env bash
# Installs what building and testing bloomrs needs on Debian/Ubuntu, or says exactly what is
# missing where it cannot install. Each dependency is detected by the thing that is actually
# loaded or run, not by a file whose name looks alike:
#
#   libclang      bindgen (in the redis-module crate's build script) loads the C library
#                 libclang at build time, and needs clang's builtin headers beside it.
#                 Debian: libclang-dev. Never libclang-cpp, the C++ interface.
#   redis-server  the server the integration tests start: Redis 7.0 or newer.
#   redis-cli     redis-cli and redis-benchmark (cluster test, benchmarks). Debian: redis-tools.
#   valkey-server the second server of the integration suite: Valkey 8 or newer. Debian 12 has
#                 it in its bookworm-backports suite, which this script adds when needed by
#                 reusing the system's own Debian source entry.
#   dpkg-deb, dpkg-shlibdeps, lintian
#                 what `make package` and the package test run (on Debian/Ubuntu only, where
#                 dpkg exists): dpkg-deb builds the package, dpkg-shlibdeps names its library
#                 dependencies (Debian: dpkg-dev), lintian checks it.
#
# Usage:
#   scripts/install-deps.sh                 detect, install what is missing (root or sudo)
#   scripts/install-deps.sh --check         detect only; exit 1 if something is missing
#   scripts/install-deps.sh --probe NAME    detect one dependency; prints "present: ..." or
#                                           "missing: <why>" and exits 0 or 1
# SERVER=redis or SERVER=valkey limits the servers to the one the tests will use.
# DEPS_ROOT=DIR makes the library probe look under DIR instead of / and skips the package
# manager (the detection test uses it).
set -euo pipefail

root="${DEPS_ROOT:-}"

# --- libclang ------------------------------------------------------------------------------

# The file names clang-sys (bindgen's loader) accepts for the C library: libclang.so,
# libclang-N.so, libclang.so.N, libclang-N.so.N. libclang-cpp.so.N is another library.
is_libclang_name() {
    [[ "$1" =~ ^libclang(-[0-9][0-9.]*)?\.so(\.[0-9][0-9.]*)?$ ]]
}

# Prints the first libclang C library in the given directories (globs allowed).
find_libclang_in() {
    local dir file
    shopt -s nullglob
    for dir in "$@"; do
        [ -d "$dir" ] || continue
        for file in "$dir"/libclang*.so*; do
            if is_libclang_name "$(basename "$file")" && [ -e "$file" ]; then
                echo "$file"
                shopt -u nullglob
                return 0
            fi
        done
    done
    shopt -u nullglob
    return 1
}

# The directories clang-sys searches on Linux, under $root.
clang_sys_dirs() {
    local pattern
    shopt -s nullglob
    for pattern in '/usr/local/llvm*/lib*' '/usr/local/lib*/*/*' '/usr/local/lib*/*' \
        '/usr/local/lib*' '/usr/lib*/*/*' '/usr/lib*/*' '/usr/lib*'; do
        # shellcheck disable=SC2086
        for dir in $root$pattern; do
            echo "$dir"
        done
    done
    shopt -u nullglob
}

# An installed libclang-N-dev (or libclang-dev) brings the library and the builtin headers.
dpkg_has_libclang_dev() {
    dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' 'libclang-dev' 'libclang-[0-9]*-dev' \
        2>/dev/null | grep -Eq '^libclang(-[0-9]+)?-dev ii'
}

probe_libclang() {
    local found
    if [ -n "${LIBCLANG_PATH:-}" ]; then
        if [ -f "$LIBCLANG_PATH" ] && is_libclang_name "$(basename "$LIBCLANG_PATH")"; then
            echo "present: $LIBCLANG_PATH (LIBCLANG_PATH)"
            return 0
        fi
        if found="$(find_libclang_in "$LIBCLANG_PATH")"; then
            echo "present: $found (LIBCLANG_PATH)"
            return 0
        fi
        echo "missing: LIBCLANG_PATH=$LIBCLANG_PATH holds no libclang.so, libclang-N.so, libclang.so.N or libclang-N.so.N"
        return 1
    fi
    if [ -z "$root" ] && command -v dpkg-query >/dev/null 2>&1; then
        if dpkg_has_libclang_dev; then
            echo "present: libclang-dev (dpkg)"
            return 0
        fi
        echo "missing: no libclang-dev package is installed (libclang-cpp is not libclang)"
        return 1
    fi
    # shellcheck disable=SC2046
    if found="$(find_libclang_in $(clang_sys_dirs))"; then
        echo "present: $found"
        return 0
    fi
    echo "missing: no libclang.so, libclang-N.so, libclang.so.N or libclang-N.so.N where bindgen looks"
    return 1
}

# --- servers and tools ---------------------------------------------------------------------

# The "7.0.15" of `redis-server --version` style output, from the field after "v=" or the last word.
version_of() {
    local out="$1"
    if [[ "$out" =~ v=([0-9]+\.[0-9]+(\.[0-9]+)?) ]]; then
        echo "${BASH_REMATCH[1]}"
    elif [[ "$out" =~ ([0-9]+\.[0-9]+\.[0-9]+) ]]; then
        echo "${BASH_REMATCH[1]}"
    fi
}

# probe_binary NAME PRODUCT MIN_MAJOR: NAME --version must name PRODUCT at MIN_MAJOR or newer.
probe_binary() {
    local name="$1" product="$2" min_major="$3" out version
    if ! command -v "$name" >/dev/null 2>&1; then
        echo "missing: $name is not on PATH"
        return 1
    fi
    if ! out="$("$name" --version 2>&1)"; then
        echo "missing: $name --version failed: $out"
        return 1
    fi
    if [[ "$out" != "$product"* ]]; then
        echo "missing: $name is not $product (it says: $out)"
        return 1
    fi
    version="$(version_of "$out")"
    if [ -z "$version" ] || [ "${version%%.*}" -lt "$min_major" ]; then
        echo "missing: $name ${version:-of unknown version} is older than $min_major.0"
        return 1
    fi
    echo "present: $name $version"
}

probe() {
    case "$1" in
        libclang) probe_libclang ;;
        redis-server) probe_binary redis-server "Redis server" 7 ;;
        redis-cli) probe_binary redis-cli "redis-cli" 7 && probe_binary redis-benchmark "redis-benchmark" 7 ;;
        valkey-server) probe_binary valkey-server "Valkey server" 8 ;;
        valkey-cli) probe_binary valkey-cli "valkey-cli" 8 ;;
        cargo) probe_binary cargo "cargo" 1 ;;
        dpkg-deb) probe_binary dpkg-deb "Debian 'dpkg-deb'" 1 ;;
        dpkg-shlibdeps) probe_binary dpkg-shlibdeps "Debian dpkg-shlibdeps" 1 ;;
        lintian) probe_binary lintian "Lintian" 2 ;;
        *)
            echo "unknown dependency: $1" >&2
            return 2
            ;;
    esac
}

# The Debian package that provides each dependency.
package_of() {
    case "$1" in
        libclang) echo libclang-dev ;;
        redis-server) echo redis-server ;;
        redis-cli) echo redis-tools ;;
        valkey-server) echo valkey-server ;;
        valkey-cli) echo valkey-tools ;;
        dpkg-deb) echo dpkg ;;
        dpkg-shlibdeps) echo dpkg-dev ;;
        lintian) echo lintian ;;
    esac
}

# --- installing ----------------------------------------------------------------------------

# Adds Debian's bookworm-backports suite (for Valkey) by copying the URIs and Signed-By of the
# system's own Debian entry, so no host name is written here. Backports stay pinned low by
# default: nothing else is upgraded.
add_backports() {
    local list=/etc/apt/sources.list.d/bloomrs-backports.sources src=/etc/apt/sources.list.d/debian.sources
    if apt-cache policy 2>/dev/null | grep -q 'bookworm-backports'; then
        return 0
    fi
    if [ ! -f "$src" ]; then
        echo "error: no $src to take the Debian mirror from; add the bookworm-backports suite by hand, then run: apt-get install -t bookworm-backports valkey-server valkey-tools" >&2
        return 1
    fi
    local uris signed
    uris="$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$src")"
    signed="$(awk '/^Signed-By:/ {print $2; exit}' "$src")"
    if [ -z "$uris" ]; then
        echo "error: no Debian URIs in $src; add the bookworm-backports suite by hand" >&2
        return 1
    fi
    {
        echo "Types: deb"
        echo "URIs: $uris"
        echo "Suites: bookworm-backports"
        echo "Components: main"
        [ -n "$signed" ] && echo "Signed-By: $signed"
    } | "${sudo[@]}" tee "$list" >/dev/null
    echo "added the bookworm-backports suite ($list)"
}

main() {
    if [ "${1:-}" = "--probe" ]; then
        probe "${2:?--probe needs a dependency name}"
        return
    fi
    local check_only=0
    [ "${1:-}" = "--check" ] && check_only=1

    if ! probe cargo >/dev/null; then
        echo "error: cargo is not installed; install a Rust toolchain (https://rustup.rs) first" >&2
        return 1
    fi

    local deps=(libclang redis-cli)
    case "${SERVER:-all}" in
        redis) deps+=(redis-server) ;;
        valkey) deps+=(valkey-server) ;;
        *) deps+=(redis-server valkey-server) ;;
    esac
    # The package build and test, where packages are dpkg's.
    if command -v dpkg >/dev/null 2>&1; then
        deps+=(dpkg-deb dpkg-shlibdeps lintian)
    fi

    local dep why missing=() backports=()
    for dep in "${deps[@]}"; do
        if ! why="$(probe "$dep")"; then
            echo "$dep ${why}" >&2
            case "$dep" in
                valkey-server) backports+=(valkey-server valkey-tools) ;;
                *) missing+=("$(package_of "$dep")") ;;
            esac
        fi
    done
    if [ ${#missing[@]} -eq 0 ] && [ ${#backports[@]} -eq 0 ]; then
        return 0
    fi
    local wanted="${missing[*]} ${backports[*]}"
    if [ "$check_only" -eq 1 ]; then
        echo "missing packages: $wanted" >&2
        return 1
    fi

    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo)
    else
        echo "error: missing packages:$wanted; as root run: apt-get update && apt-get install -y ${missing[*]}${backports:+ && apt-get install -y -t bookworm-backports ${backports[*]} (after adding the bookworm-backports suite)}" >&2
        return 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: no apt-get here; install with your package manager: $wanted" >&2
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    echo "installing:$wanted"
    if [ ${#backports[@]} -gt 0 ]; then
        add_backports
    fi
    "${sudo[@]}" apt-get update -qq
    if [ ${#missing[@]} -gt 0 ]; then
        "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if [ ${#backports[@]} -gt 0 ]; then
        "${sudo[@]}" apt-get install -y -qq -t bookworm-backports "${backports[@]}" >/dev/null
    fi
    # Whatever was installed must now be the right thing.
    local failed=0
    for dep in "${deps[@]}"; do
        if ! why="$(probe "$dep")"; then
            echo "error: still missing after installing: $dep $why" >&2
            failed=1
        fi
    done
    [ "$failed" -eq 0 ] && echo "installed:$wanted"
    return "$failed"
}

sudo=()
main "$@"
