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
#   redis8, valkey81, valkey9
#                 Debian 13's Redis 8.0 and Valkey 8.1, and Debian 14's Valkey 9.1, the third to
#                 fifth servers of the integration suite. Their packaged binaries need a newer
#                 glibc than Debian 12 has, so this script builds them from Debian's source
#                 packages into a cache outside the checkout (see "Debian's newer servers"
#                 below); a build counts only if its binary's --version names the right server
#                 and series.
#   build-tools   what building those needs: make, a C compiler, pkg-config (Debian:
#                 build-essential, pkg-config).
#   dpkg-deb, dpkg-shlibdeps, lintian
#                 what `make package` and the package test run (on Debian/Ubuntu only, where
#                 dpkg exists): dpkg-deb builds the package, dpkg-shlibdeps names its library
#                 dependencies (Debian: dpkg-dev), lintian checks it.
#   debootstrap   makes the Debian 13 and 14 roots the package tests install the package in.
#   redis-py      a python3 that imports redis-py 4.3 or newer, which runs the docs' client
#                 examples (tests/clients.rs). Debian: python3-redis, for /usr/bin/python3.
#
# Usage:
#   scripts/install-deps.sh                 detect, install what is missing (root or sudo)
#   scripts/install-deps.sh --check         detect only, one line per dependency; exit 1 if
#                                           something is missing
#   scripts/install-deps.sh --help          this text
#   scripts/install-deps.sh --no-build      install what is missing but build no server (the
#                                           test run builds them beside the module's build)
#   scripts/install-deps.sh --build NAME    builds server NAME (redis8, valkey81, valkey9) into
#                                           the cache unless a right build is there
#   scripts/install-deps.sh --probe NAME    detect one dependency; prints "present: ..." or
#                                           "missing: <why>" and exits 0 or 1
#   scripts/install-deps.sh --server NAME   prints the server binary of SERVER value NAME
#                                           (redis, valkey, redis8, valkey81, valkey9);
#                                           exits 1 if absent
# SERVER=redis, valkey, redis8, valkey81 or valkey9 (or several, separated by spaces or commas)
# limits the servers to the ones the tests will use; empty or "all" means all five.
# BLOOMRS_SERVER_CACHE=DIR puts the built servers there instead of the default cache.
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

# probe_redis_py: a python3 (the one on PATH, or Debian's /usr/bin/python3, where
# python3-redis installs) imports redis-py 4.3 or newer: what tests/clients.rs runs the docs'
# client examples with.
probe_redis_py() {
    local python version found=""
    for python in python3 /usr/bin/python3; do
        version="$("$python" -c 'import redis; print(redis.__version__)' 2>/dev/null)" || continue
        case "$version" in
            [0-3].* | 4.[0-2].*) found="redis-py $version is older than 4.3 ($python)" ;;
            *)
                echo "present: redis-py $version ($python)"
                return 0
                ;;
        esac
    done
    echo "missing: ${found:-no python3 imports redis (redis-py)}"
    return 1
}

probe() {
    case "$1" in
        libclang) probe_libclang ;;
        redis-server) probe_binary redis-server "Redis server" 7 ;;
        redis-cli) probe_binary redis-cli "redis-cli" 7 && probe_binary redis-benchmark "redis-benchmark" 7 ;;
        valkey-server) probe_binary valkey-server "Valkey server" 8 ;;
        valkey-cli) probe_binary valkey-cli "valkey-cli" 8 ;;
        redis8 | valkey81 | valkey9) probe_built "$1" ;;
        build-tools) probe_build_tools ;;
        cargo) probe_binary cargo "cargo" 1 ;;
        dpkg-deb) probe_binary dpkg-deb "Debian 'dpkg-deb'" 1 ;;
        dpkg-shlibdeps) probe_binary dpkg-shlibdeps "Debian dpkg-shlibdeps" 1 ;;
        lintian) probe_binary lintian "Lintian" 2 ;;
        debootstrap) probe_debootstrap ;;
        redis-py) probe_redis_py ;;
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
        build-tools) echo build-essential pkg-config ;;
        debootstrap) echo debootstrap ;;
        redis-py) echo python3-redis ;;
    esac
}

# --- Debian's newer servers, built from source ---------------------------------------------

# Debian 13 (trixie) ships Redis 8.0 and Valkey 8.1, Debian 14 (forky, and sid) Valkey 9.1; their
# binaries need a newer glibc than Debian 12 has. They are built here from Debian's own source
# packages (the upstream tarball inside, with the upstream make) into a cache outside the
# checkout that later runs reuse: $BLOOMRS_SERVER_CACHE, by default
# ${XDG_CACHE_HOME:-$HOME/.cache}/bloomrs/servers, one directory per server and version
# (redis-8.0.2/bin/redis-server, valkey-9.1.2/bin/valkey-server).
server_cache() {
    echo "${BLOOMRS_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bloomrs/servers}"
}

# What each built server is: source package, binary, the product and the major.minor its
# --version must say, and the Debian suites whose source package has it (the first that has
# the tarball is used: forky is Debian 14 while it is testing, sid always has it).
built_source() { case "$1" in redis8) echo redis ;; valkey81 | valkey9) echo valkey ;; esac; }
built_binary() { case "$1" in redis8) echo redis-server ;; valkey81 | valkey9) echo valkey-server ;; esac; }
built_product() { case "$1" in redis8) echo "Redis server" ;; valkey81 | valkey9) echo "Valkey server" ;; esac; }
built_series() { case "$1" in redis8) echo 8.0 ;; valkey81) echo 8.1 ;; valkey9) echo 9.1 ;; esac; }
built_suites() { case "$1" in redis8 | valkey81) echo trixie ;; valkey9) echo forky sid ;; esac; }
built_release() { case "$1" in redis8 | valkey81) echo "Debian 13" ;; valkey9) echo "Debian 14" ;; esac; }

# probe_built NAME: the newest cached build of NAME whose binary says it is the right product
# and series. Prints "present: PATH VERSION".
probe_built() {
    local name="$1" source binary product series dir out version found=""
    source="$(built_source "$name")"
    binary="$(built_binary "$name")"
    product="$(built_product "$name")"
    series="$(built_series "$name")"
    shopt -s nullglob
    for dir in "$(server_cache)/$source-$series".*; do
        [ -x "$dir/bin/$binary" ] || continue
        out="$("$dir/bin/$binary" --version 2>&1)" || continue
        version="$(version_of "$out")"
        if [[ "$out" == "$product"* && "$version" == "$series".* ]]; then
            found="$dir/bin/$binary $version"
        fi
    done
    shopt -u nullglob
    if [ -z "$found" ]; then
        echo "missing: no $product $series.x built in $(server_cache) (scripts/install-deps.sh builds it from $(built_release "$name")'s source package)"
        return 1
    fi
    echo "present: $found"
}

# debootstrap (the Debian 13 package test) with a script for trixie.
probe_debootstrap() {
    if ! command -v debootstrap >/dev/null 2>&1; then
        echo "missing: debootstrap is not on PATH"
        return 1
    fi
    if [ ! -e /usr/share/debootstrap/scripts/trixie ]; then
        echo "missing: this debootstrap has no script for trixie"
        return 1
    fi
    echo "present: debootstrap $(debootstrap --version 2>/dev/null | awk '{print $2}')"
}

# make, a C compiler and pkg-config, by running them.
probe_build_tools() {
    local tool
    for tool in make cc pkg-config tar; do
        if ! "$tool" --version >/dev/null 2>&1; then
            echo "missing: $tool does not run (Debian: build-essential pkg-config)"
            return 1
        fi
    done
    echo "present: make, cc, pkg-config"
}

# The binary of a SERVER value: redis, valkey, redis8, valkey81, valkey9.
server_path() {
    local why
    case "$1" in
        redis) command -v redis-server ;;
        valkey) command -v valkey-server ;;
        redis8 | valkey81 | valkey9)
            why="$(probe_built "$1")" || return 1
            why="${why#present: }"
            echo "${why% *}"
            ;;
        *)
            echo "unknown server: $1 (redis, valkey, redis8, valkey81, valkey9)" >&2
            return 2
            ;;
    esac
}

# The system's Debian mirror, from its own source entry: no host name is written here.
debian_uri() {
    local src=/etc/apt/sources.list.d/debian.sources
    [ -f "$src" ] || return 1
    awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$src"
}

debian_signed_by() {
    awk '/^Signed-By:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null
}

# debian_apt STATE ARGS...: apt-get on the private sources file STATE/debian.sources (deb822: the
# name must end in .sources) and private state
# and cache directories under STATE, so the system's own apt state is untouched.
debian_apt() {
    local state="$1"
    shift
    apt-get -q -o Dir::Etc::sourcelist="$state/debian.sources" -o Dir::Etc::sourceparts=/nonexistent \
        -o Dir::State::Lists="$state/lists" -o Dir::Cache="$state/cache" \
        -o Dir::State::status="$state/status" -o Debug::NoLocking=1 "$@"
}

# build_locked NAME: builds NAME unless another run built it meanwhile (one build at a time per
# cache, so two test runs started together do not both build).
build_locked() {
    mkdir -p "$(server_cache)"
    (
        flock 9
        probe_built "$1" >/dev/null || build_server "$1"
    ) 9>"$(server_cache)/.lock"
}

# fetch_source NAME WORK: downloads into WORK/src the upstream tarball of NAME's source package
# from the first of its Debian suites whose version is NAME's series, through a private sources
# file (the URIs and Signed-By of the system's own Debian entry: no host is written here).
# Prints the tarball's path.
fetch_source() {
    local name="$1" work="$2" source series uri signed suite tarball version
    source="$(built_source "$name")"
    series="$(built_series "$name")"
    if ! uri="$(debian_uri)" || [ -z "$uri" ]; then
        echo "error: no Debian URIs in /etc/apt/sources.list.d/debian.sources to fetch the $source source from" >&2
        return 1
    fi
    signed="$(debian_signed_by)"
    for suite in $(built_suites "$name"); do
        rm -rf "$work/state" "$work/src"
        mkdir -p "$work/state/lists/partial" "$work/state/cache/archives/partial" "$work/src"
        : >"$work/state/status"
        {
            echo "Types: deb-src"
            echo "URIs: $uri"
            echo "Suites: $suite"
            echo "Components: main"
            if [ -n "$signed" ]; then echo "Signed-By: $signed"; fi
        } >"$work/state/debian.sources"
        if ! debian_apt "$work/state" update >>"$work/apt.log" 2>&1; then
            echo "apt-get update of $suite's sources failed" >>"$work/apt.log"
            continue
        fi
        # The .orig tarball is what matters; a missing .dsc on the mirror is not fatal.
        (cd "$work/src" && debian_apt "$work/state" source --download-only "$source") >>"$work/apt.log" 2>&1 || true
        tarball="$(ls "$work/src/${source}_"*.orig.tar.* 2>/dev/null | head -n 1 || true)"
        version="$(basename "${tarball:-none}")"
        version="${version#"${source}_"}"
        if [ -n "$tarball" ] && [[ "$version" == "$series".* ]]; then
            echo "$tarball"
            return 0
        fi
        echo "$suite has no $source $series.x source tarball (${tarball:+it has $version})" >>"$work/apt.log"
    done
    cat "$work/apt.log" >&2
    echo "error: no $source $series.x source tarball in $(built_suites "$name")" >&2
    return 1
}

# build_server NAME: downloads Debian's source package of NAME, builds the server and its
# command-line client from its upstream tree with the upstream make (vendored jemalloc, Lua and
# hiredis; no TLS, no systemd) and puts both into the cache's bin/. Only those two programs, at
# -O2 (upstream's default -O3 adds link-time optimisation): the tests run nothing else, and this
# takes about 45 % less CPU than upstream's `make install` (about 3 minutes per server on 2
# idle cores instead of 5).
build_server() {
    local name="$1" source binary work tarball version prefix
    source="$(built_source "$name")"
    binary="$(built_binary "$name")"
    mkdir -p "$(server_cache)"
    # What a failed build left for its log.
    rm -rf "$(server_cache)/.build-$name".*
    work="$(mktemp -d "$(server_cache)/.build-$name.XXXXXX")"
    echo "building $source $(built_series "$name") from $(built_release "$name")'s source package into $(server_cache) (about 3 minutes)"
    tarball="$(fetch_source "$name" "$work")" || return 1
    version="$(basename "$tarball")"
    version="${version#"${source}_"}"
    version="${version%%.orig.tar.*}"
    version="${version%%+*}"
    mkdir "$work/tree"
    tar -xf "$tarball" -C "$work/tree" --strip-components=1
    prefix="$(server_cache)/$source-$version"
    rm -rf "$prefix.tmp"
    if ! make -C "$work/tree/src" -j2 BUILD_TLS=no USE_SYSTEMD=no OPTIMIZATION=-O2 \
        "$binary" "$source-cli" >"$work/build.log" 2>&1; then
        tail -n 30 "$work/build.log" >&2
        echo "error: building $source $version failed (log: $work/build.log)" >&2
        return 1
    fi
    mkdir -p "$prefix.tmp/bin"
    cp "$work/tree/src/$binary" "$work/tree/src/$source-cli" "$prefix.tmp/bin/"
    rm -rf "$prefix"
    mv "$prefix.tmp" "$prefix"
    rm -rf "$work"
    echo "built $("$prefix/bin/$binary" --version)"
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

# usage: the Usage lines of this file's header comment.
usage() {
    sed -n '/^# Usage:/,/^[^#]/{/^[^#]/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

main() {
    case "${1:-}" in
        "" | --check | --no-build | --build | --probe | --server) ;;
        -h | --help)
            usage
            return 0
            ;;
        *)
            echo "error: unknown option: $1" >&2
            usage >&2
            return 2
            ;;
    esac
    if [ "${1:-}" = "--probe" ]; then
        probe "${2:?--probe needs a dependency name}"
        return
    fi
    if [ "${1:-}" = "--server" ]; then
        server_path "${2:?--server needs redis, valkey, redis8, valkey81 or valkey9}"
        return
    fi
    if [ "${1:-}" = "--build" ]; then
        build_locked "${2:?--build needs redis8, valkey81 or valkey9}"
        return
    fi
    local check_only=0 build=1
    [ "${1:-}" = "--check" ] && check_only=1
    [ "${1:-}" = "--no-build" ] && build=0

    local dep
    if ! probe cargo >/dev/null; then
        echo "error: cargo is not installed; install a Rust toolchain (https://rustup.rs) first" >&2
        return 1
    fi

    local deps=(libclang redis-cli redis-py)
    local built=() servers name
    servers="${SERVER:-all}"
    for name in ${servers//,/ }; do
        case "$name" in
            redis) deps+=(redis-server) ;;
            valkey) deps+=(valkey-server) ;;
            redis8) built+=(redis8) ;;
            valkey81) built+=(valkey81) ;;
            valkey9) built+=(valkey9) ;;
            *)
                deps+=(redis-server valkey-server)
                built+=(redis8 valkey81 valkey9)
                ;;
        esac
    done
    # The built servers need the build tools only when one is missing.
    for dep in "${built[@]}"; do
        if ! probe "$dep" >/dev/null; then
            deps+=(build-tools)
            break
        fi
    done
    # The package build and test, where packages are dpkg's.
    if command -v dpkg >/dev/null 2>&1; then
        deps+=(dpkg-deb dpkg-shlibdeps lintian debootstrap)
    fi

    local why packages missing=() backports=()
    for dep in "${deps[@]}"; do
        if why="$(probe "$dep")"; then
            [ "$check_only" -eq 1 ] && echo "$dep $why"
        else
            echo "$dep ${why}" >&2
            case "$dep" in
                valkey-server) backports+=(valkey-server valkey-tools) ;;
                *)
                    read -ra packages <<<"$(package_of "$dep")"
                    missing+=("${packages[@]}")
                    ;;
            esac
        fi
    done
    local unbuilt=()
    for dep in "${built[@]}"; do
        if why="$(probe "$dep")"; then
            [ "$check_only" -eq 1 ] && echo "$dep $why"
        else
            echo "$dep ${why}" >&2
            unbuilt+=("$dep")
        fi
    done
    if [ "$check_only" -eq 1 ]; then
        local status=0
        if [ ${#missing[@]} -gt 0 ] || [ ${#backports[@]} -gt 0 ]; then
            echo "missing packages: ${missing[*]} ${backports[*]}" >&2
            status=1
        fi
        if [ ${#unbuilt[@]} -gt 0 ]; then
            echo "servers to build: ${unbuilt[*]}" >&2
            status=1
        fi
        [ "$status" -eq 0 ] && echo "everything make run and make test need is here"
        return "$status"
    fi
    if [ ${#missing[@]} -gt 0 ] || [ ${#backports[@]} -gt 0 ]; then
        install_packages "${deps[@]}" || return 1
    fi
    if [ "$build" -eq 0 ]; then
        [ ${#unbuilt[@]} -eq 0 ] || echo "servers to build (scripts/install-deps.sh --build NAME): ${unbuilt[*]}"
        return 0
    fi
    for dep in "${unbuilt[@]}"; do
        build_locked "$dep" || return 1
        why="$(probe "$dep")" || {
            echo "error: the $dep build is not what it should be: $why" >&2
            return 1
        }
    done
}

# install_packages DEPS...: apt-get installs what `missing` and `backports` name, then checks
# every one of DEPS again.
install_packages() {
    local wanted="${missing[*]} ${backports[*]}"
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
    local dep why failed=0
    for dep in "$@"; do
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
