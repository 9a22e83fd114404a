#!/usr/bin/env bash
# The package on a newer Debian: `scripts/package/debian.sh 13` (`make package-test-debian13`)
# in a real Debian 13 (trixie) root with Debian 13's own packaged redis-server 8.0 and
# valkey-server 8.1, `scripts/package/debian.sh 14` (`make package-test-debian14`) in a Debian 14
# (forky; sid where forky has not the packages) root with its redis-server 8.0 and
# valkey-server 9.1, installed there by apt-get (`make package-test` runs both when debootstrap
# is present):
#
#   1. dpkg -i of the bloomrs package built here (dist/, scripts/package/build.sh);
#   2. each packaged server started from its installed configuration (plus a free port, a
#      scratch dir and log, in the foreground) has the module loaded: MODULE LIST, BF.ADD,
#      INFO bf, on Redis 8 RedisBloom 8's unprefixed configuration names, and on Valkey 9 the
#      module's atomic slot migration option (INFO modules);
#   3. dpkg -r: the configuration files byte-identical to before, the module gone, the servers
#      start clean; dpkg --purge leaves nothing.
#
# The root is made once with debootstrap from the mirror of the system's own Debian entry
# (/etc/apt/sources.list.d/debian.sources; no host name is written here) and kept outside the
# checkout for later runs: $BLOOMRS_DEBIAN13_ROOT (or ..._DEBIAN14_ROOT), by default
# ${XDG_CACHE_HOME:-$HOME/.cache}/bloomrs/debian13/root (or debian14; about a minute to make,
# 360 MB each; a run on it takes seconds).
# Whatever happens, bloomrs is purged from the root and its configuration files get their bytes
# back, so the next run starts from the same root. Needs root (chroot) and debootstrap.
set -euo pipefail

cd "$(dirname "$0")/../.."
export LC_ALL=C
release="${1:?usage: scripts/package/debian.sh 13|14 [--root-only]}"
# Per release: the suites to make the root from (the first whose servers are right is kept),
# the series its packaged redis-server and valkey-server must say.
case "$release" in
    13) suites=(trixie) redis_series=8.0 valkey_series=8.1 ;;
    14) suites=(forky sid) redis_series=8.0 valkey_series=9.1 ;;
    *)
        echo "usage: scripts/package/debian.sh 13|14" >&2
        exit 2
        ;;
esac
name="Debian $release"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/bloomrs/debian$release"
root_override="BLOOMRS_DEBIAN${release}_ROOT"
root="${!root_override:-$cache/root}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"

step() { echo "--- $*"; }
die() {
    echo "FAIL: $*" >&2
    exit 1
}

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIPPED: the $name package test needs root (debootstrap, chroot)"
    exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed (scripts/install-deps.sh installs it)"

# in_root COMMAND...: runs COMMAND in the root with /proc mounted, in a private mount namespace
# so that the mount goes away with the command, whatever happens.
in_root() {
    unshare --mount --propagation private --fork -- \
        sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"
}

# --- the root ----------------------------------------------------------------------------------

# make_root SUITE: debootstraps SUITE into the root and installs its redis-server and
# valkey-server there. A debootstrap without a script for SUITE (Debian 12's has none for
# forky) uses sid's, which makes any later suite.
make_root() {
    local suite="$1" uri script="" new="$root.new"
    uri="$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)"
    [ -n "$uri" ] || die "no Debian URIs in /etc/apt/sources.list.d/debian.sources to make the root from"
    [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=/usr/share/debootstrap/scripts/sid
    step "making a $name root ($suite) in $root (once; later runs reuse it)"
    rm -rf "$new"
    mkdir -p "$cache"
    # shellcheck disable=SC2086
    debootstrap --variant=minbase "$suite" "$new" "$uri" $script >"$cache/debootstrap.log" 2>&1 || {
        echo "debootstrap of $suite failed (log: $cache/debootstrap.log)" >&2
        return 1
    }
    # Packages may not start services in the root.
    printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
    chmod 755 "$new/usr/sbin/policy-rc.d"
    # Testing and sid sign their Release files for a week (Valid-Until); a mirror that is a
    # snapshot may hold an older one, still signed: the signature is checked, the date not.
    root="$new" in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server valkey-server' \
        >"$cache/apt.log" 2>&1 || {
        echo "apt-get install in the $suite root failed (log: $cache/apt.log)" >&2
        return 1
    }
    root="$new" root_ready || {
        echo "$suite's servers are not Redis $redis_series and Valkey $valkey_series" >&2
        return 1
    }
    rm -rf "$root"
    mv "$new" "$root"
}

# The root counts only if its servers are the release's.
root_ready() {
    [ -x "$root/usr/bin/redis-server" ] && [ -x "$root/usr/bin/valkey-server" ] || return 1
    in_root redis-server --version | grep -q "^Redis server v=${redis_series//./\\.}\." &&
        in_root valkey-server --version | grep -q "^Valkey server v=${valkey_series//./\\.}\."
}

if ! root_ready; then
    for suite in "${suites[@]}"; do
        make_root "$suite" && break
    done
fi
root_ready || die "no $name root with Redis $redis_series and Valkey $valkey_series (tried: ${suites[*]})"
# `--root-only`: only make sure the root is there (the test run makes it while it compiles).
if [ "${2:-}" = "--root-only" ]; then
    echo "root: $root"
    exit 0
fi
echo "root: $root ($(sed -n 's/^PRETTY_NAME="\(.*\)"$/\1/p' "$root/etc/os-release"))"
echo "servers: $(in_root redis-server --version | cut -d' ' -f1-3), $(in_root valkey-server --version | cut -d' ' -f1-3)"

# --- the package -----------------------------------------------------------------------------

deb="$(ls dist/bloomrs_"$version"_*.deb 2>/dev/null | head -n 1 || true)"
if [ -z "$deb" ]; then
    mapfile -t artifacts < <(scripts/package/build.sh)
    deb="${artifacts[0]}"
fi
[ -f "$deb" ] || die "no package built"
if in_root dpkg-query -W bloomrs >/dev/null 2>&1; then
    in_root dpkg --purge bloomrs >/dev/null
fi

scratch="$root/tmp/bloomrs-debian"
rm -rf "$scratch"
mkdir -p "$scratch"
cp "$deb" "$scratch/bloomrs.deb"
confs=(/etc/redis/redis.conf /etc/valkey/valkey.conf)
for i in "${!confs[@]}"; do
    cp -p "$root${confs[$i]}" "$scratch/conf.$i"
done

cleanup() {
    local status=$?
    if in_root dpkg-query -W -f='${db:Status-Status}' bloomrs 2>/dev/null | grep -qv not-installed; then
        in_root dpkg --purge bloomrs >/dev/null 2>&1 || echo "warning: dpkg --purge bloomrs in the root failed" >&2
    fi
    for i in "${!confs[@]}"; do
        [ -f "$scratch/conf.$i" ] && ! cmp -s "$scratch/conf.$i" "$root${confs[$i]}" &&
            cp -p "$scratch/conf.$i" "$root${confs[$i]}" && echo "restored ${confs[$i]} in the root"
    done
    rm -rf "$scratch"
    if [ "$status" -eq 0 ]; then
        echo "$name package test passed"
    else
        echo "$name package test FAILED (the root was put back as it was)" >&2
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# What runs inside the root: the servers' own programs and configuration files.
cat >"$scratch/inside.sh" <<'INSIDE'
#!/bin/sh
# Runs in the Debian root. $1: install (check loaded) or removed (check clean).
set -eu
dir=/tmp/bloomrs-debian
fail() { echo "FAIL: $*" >&2; exit 1; }
# server PROGRAM CLI CONF MODULE
server() {
    program="$1" cli="$2" conf="$3" module="$4" port=$((20000 + $$ % 20000))
    work="$dir/$program"
    rm -rf "$work" && mkdir -p "$work"
    "$program" "$conf" --port "$port" --daemonize no --supervised no --dir "$work" \
        --logfile "$work/log" --pidfile "$work/pid" --save '' --appendonly no >"$work/out" 2>&1 &
    pid=$!
    tries=0
    until [ "$("$cli" -p "$port" PING 2>/dev/null)" = PONG ]; do
        tries=$((tries + 1))
        if [ "$tries" -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
            cat "$work/log" "$work/out" >&2
            fail "$program $conf did not start"
        fi
        sleep 0.1
    done
    list="$("$cli" -p "$port" MODULE LIST | tr '\n' ' ')"
    if [ "$mode" = install ]; then
        case "$list" in
            *"name bf ver 20820 path $module args "*) ;;
            *) fail "$program: MODULE LIST: $list" ;;
        esac
        [ "$("$cli" -p "$port" BF.ADD k item)" = 1 ] || fail "$program: BF.ADD"
        [ "$("$cli" -p "$port" BF.EXISTS k item)" = 1 ] || fail "$program: BF.EXISTS"
        info="$("$cli" -p "$port" INFO bf | tr -d '\r' | grep '^bf_bloomrs_version:')"
        [ "$info" = "bf_bloomrs_version:$version" ] || fail "$program: INFO bf: $info"
        # RedisBloom 8's names on Redis 8; bf.<name> on both.
        names="bf.bf-error-rate"
        [ "$program" = redis-server ] && names="$names bf-error-rate"
        for name in $names; do
            got="$("$cli" -p "$port" CONFIG GET "$name" | tr '\n' ' ')"
            [ "$got" = "$name 0.01 " ] || fail "$program: CONFIG GET $name: $got"
        done
        # Atomic slot migration declared on Valkey 9 and later, never elsewhere.
        options="$("$cli" -p "$port" INFO modules | tr -d '\r' | grep '^module:name=bf,' | sed 's/.*options=//')"
        case "$("$program" --version)" in
            "Valkey server v="[1-9][0-9].* | "Valkey server v="9.*) want="[handle-io-errors|handle-atomic-slot-migration]" ;;
            *) want="[handle-io-errors]" ;;
        esac
        [ "$options" = "$want" ] || fail "$program: INFO modules options: $options"
        echo "$("$program" --version | cut -d' ' -f1-3) with $conf: bloomrs loaded (MODULE LIST, BF.ADD, INFO bf, CONFIG GET $names, options $options)"
    else
        case "$list" in
            *"name bf "*) fail "$program: still loads bf after removal: $list" ;;
        esac
        case "$("$cli" -p "$port" BF.ADD k item 2>&1)" in
            *"unknown command"*) ;;
            *) fail "$program: BF.ADD answers without the module" ;;
        esac
        echo "$("$program" --version | cut -d' ' -f1-3) with $conf: starts clean, no bf"
    fi
    "$cli" -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    wait "$pid" 2>/dev/null || true
}
mode="$1"
version="$2"
server redis-server redis-cli /etc/redis/redis.conf /usr/lib/redis/modules/bloomrs.so
server valkey-server valkey-cli /etc/valkey/valkey.conf /usr/lib/valkey/bloomrs.so
INSIDE

step "dpkg -i in $name"
in_root dpkg -i /tmp/bloomrs-debian/bloomrs.deb
for i in "${!confs[@]}"; do
    conf="$root${confs[$i]}"
    [ "$(grep -c '^loadmodule .*bloomrs.so' "$conf")" = 1 ] || die "${confs[$i]}: no single loadmodule line for bloomrs"
    cmp -s -n "$(stat -c %s "$scratch/conf.$i")" "$scratch/conf.$i" "$conf" || die "${confs[$i]} changed before the block"
    [ "$(stat -c '%u:%g %a' "$conf")" = "$(stat -c '%u:%g %a' "$scratch/conf.$i")" ] || die "${confs[$i]}: owner or mode changed"
done
in_root sh /tmp/bloomrs-debian/inside.sh install "$version"

step "dpkg -r in $name"
in_root dpkg -r bloomrs
for i in "${!confs[@]}"; do
    cmp "$scratch/conf.$i" "$root${confs[$i]}" || die "${confs[$i]} is not as it was before"
done
for file in /usr/lib/redis/modules/bloomrs.so /usr/lib/valkey/bloomrs.so; do
    [ ! -e "$root$file" ] && [ ! -L "$root$file" ] || die "$file is still there"
done
in_root sh /tmp/bloomrs-debian/inside.sh removed "$version"
in_root dpkg --purge bloomrs >/dev/null
status="$(in_root dpkg-query -W -f='${db:Status-Status}' bloomrs 2>/dev/null || true)"
[ -z "$status" ] || [ "$status" = not-installed ] || die "after purge, bloomrs is $status"
echo "removed: configuration files byte-identical, module gone, servers start clean, purged"
