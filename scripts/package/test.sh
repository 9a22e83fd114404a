#!/usr/bin/env bash
# The package test (`make package-test`; `make test` runs it where dpkg-deb is present):
#
#   1. builds the artifacts twice and compares their bytes;
#   2. checks the package's file list and fields, and runs lintian where installed (no errors);
#   3. loads the tarball's module, unpacked into a directory with a space in its name, into
#      redis-server and valkey-server;
#   4. runs the Dockerfile's build-stage command (`make install ...`) into a scratch directory
#      and checks that the paths the recipe copies and loads are the ones it installs;
#   5. checks the configuration block on scratch files: a file without a final newline, one
#      that already loads a Bloom module, a symlink, an unterminated block, owner and mode;
#   6. as root: installs the package with dpkg -i, starts the packaged redis-server and
#      valkey-server with their installed configuration (plus a free port, a scratch dir and
#      log, in the foreground: no service manager is involved) and finds the module loaded
#      and BF.ADD working; installs it again (still one block), upgrades it to a newer
#      version, removes it (configuration byte-identical to before, files gone, servers start
#      clean) and purges it.
#
# Whatever happens, also on Ctrl-C or kill, the servers it started are stopped, the package is
# purged if it installed it, and the configuration files get back their bytes, owner and mode.
# Step 6 is skipped (and says so) when not root, or when bloomrs was installed beforehand.
set -euo pipefail

cd "$(dirname "$0")/../.."
root="$PWD"
export LC_ALL=C
scratch="$(mktemp -d "${TMPDIR:-/tmp}/bloomrs-package-test.XXXXXX")"
confs=(/etc/redis/redis.conf /etc/valkey/valkey.conf)
server_pids=()
we_installed=0
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"

step() { echo "--- $*"; }
die() {
    echo "FAIL: $*" >&2
    exit 1
}

# --- putting the machine back ----------------------------------------------------------------

save_confs() {
    local i
    for i in "${!confs[@]}"; do
        if [ -f "${confs[$i]}" ]; then
            cp -p "${confs[$i]}" "$scratch/conf.$i"
            stat -c '%u:%g %a' "${confs[$i]}" >"$scratch/conf.$i.owner"
        fi
    done
}

restore_confs() {
    local i conf owner mode
    for i in "${!confs[@]}"; do
        conf="${confs[$i]}"
        [ -f "$scratch/conf.$i" ] || continue
        read -r owner mode <"$scratch/conf.$i.owner"
        if ! cmp -s "$scratch/conf.$i" "$conf" || [ "$(stat -c '%u:%g %a' "$conf")" != "$owner $mode" ]; then
            cat "$scratch/conf.$i" >"$conf"
            chown "$owner" "$conf"
            chmod "$mode" "$conf"
            echo "restored $conf"
        fi
        # The removal rewrote it to the same bytes; its time goes back too.
        touch -r "$scratch/conf.$i" "$conf"
    done
}

cleanup() {
    local status=$?
    trap '' INT TERM HUP
    local pid
    for pid in "${server_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ "$we_installed" -eq 1 ] && dpkg-query -W bloomrs >/dev/null 2>&1; then
        dpkg --purge bloomrs >/dev/null 2>&1 || echo "warning: dpkg --purge bloomrs failed" >&2
    fi
    [ "$we_installed" -eq 1 ] && restore_confs
    rm -rf "$scratch"
    if [ "$status" -eq 0 ]; then
        echo "package test passed"
    else
        echo "package test FAILED (the machine was put back as it was)" >&2
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- servers ---------------------------------------------------------------------------------

# A port nothing listens on (the server start retries if another process takes it first).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}

# start_server NAME PROGRAM [ARGS...]: starts PROGRAM in the foreground (as a child) with ARGS
# and a free port, a scratch dir and log; sets $port. Fails with the log if it does not answer.
start_server() {
    local name="$1" program="$2" dir="$scratch/$1" attempt pid
    shift 2
    rm -rf "$dir"
    mkdir -p "$dir"
    for attempt in 1 2 3 4 5; do
        port="$(free_port)"
        "$program" "$@" --port "$port" --daemonize no --dir "$dir" --logfile "$dir/log" \
            --pidfile "$dir/pid" --save '' --appendonly no >"$dir/out" 2>&1 &
        pid=$!
        server_pids+=("$pid")
        local tries=0
        while [ "$tries" -lt 100 ]; do
            if [ "$(redis-cli -p "$port" PING 2>/dev/null)" = "PONG" ]; then
                current_pid="$pid"
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
            tries=$((tries + 1))
        done
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        grep -qs 'Address already in use' "$dir/log" "$dir/out" || break
    done
    cat "$dir/log" "$dir/out" >&2 2>/dev/null || true
    die "$name ($program $*) did not start"
}

stop_server() {
    redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    wait "$current_pid" 2>/dev/null || true
}

cli() { redis-cli -p "$port" "$@"; }

# expect WHAT ACTUAL EXPECTED
expect() {
    [ "$2" = "$3" ] || die "$1: expected '$3', got '$2'"
}

# check_module_loaded PATH: MODULE LIST shows bf at RedisBloom's version from PATH, BF.ADD
# works, INFO bf names bloomrs's version.
check_module_loaded() {
    local list
    list="$(cli MODULE LIST | tr '\n' ' ')"
    expect "MODULE LIST" "$list" "name bf ver 20820 path $1 args  "
    expect "BF.ADD" "$(cli BF.ADD package-test item)" "1"
    expect "BF.EXISTS" "$(cli BF.EXISTS package-test item)" "1"
    expect "INFO bf" "$(cli INFO bf | tr -d '\r' | sed -n 2p)" "bf_bloomrs_version:$version"
}

check_no_module() {
    expect "MODULE LIST" "$(cli MODULE LIST)" ""
    case "$(cli BF.ADD package-test item)" in
        *"unknown command"*) ;;
        *) die "BF.ADD answers without the module" ;;
    esac
}

# The servers present here: program, configuration file, module path the package enables.
servers=()
command -v redis-server >/dev/null && servers+=("redis-server /etc/redis/redis.conf /usr/lib/redis/modules/bloomrs.so")
command -v valkey-server >/dev/null && servers+=("valkey-server /etc/valkey/valkey.conf /usr/lib/valkey/bloomrs.so")
[ ${#servers[@]} -gt 0 ] || die "neither redis-server nor valkey-server is installed"

# --- 1. two builds, the same bytes -------------------------------------------------------------

step "building the package twice"
mapfile -t artifacts < <(scripts/package/build.sh)
deb="${artifacts[0]}"
tarball="${artifacts[1]}"
[[ "$deb" == *.deb && "$tarball" == *.tar.gz ]] || die "build.sh made: ${artifacts[*]}"
first="$(cd dist && cat SHA256SUMS)"
scripts/package/build.sh >/dev/null
second="$(cd dist && cat SHA256SUMS)"
expect "the second build's sha256" "$second" "$first"
echo "$first"

# --- 2. contents, fields, lintian ------------------------------------------------------------

step "contents of $deb ($(stat -c %s "$deb") bytes)"
listing="$(dpkg-deb -c "$deb" | awk '{ print $1, $2, $6, $7, $8 }')"
echo "$listing"
expected="drwxr-xr-x root/root ./  
drwxr-xr-x root/root ./usr/  
drwxr-xr-x root/root ./usr/lib/  
drwxr-xr-x root/root ./usr/lib/redis/  
drwxr-xr-x root/root ./usr/lib/redis/modules/  
-rwxr-xr-x root/root ./usr/lib/redis/modules/bloomrs.so  
drwxr-xr-x root/root ./usr/lib/valkey/  
drwxr-xr-x root/root ./usr/share/  
drwxr-xr-x root/root ./usr/share/doc/  
drwxr-xr-x root/root ./usr/share/doc/bloomrs/  
-rw-r--r-- root/root ./usr/share/doc/bloomrs/README.Debian  
-rw-r--r-- root/root ./usr/share/doc/bloomrs/changelog.gz  
-rw-r--r-- root/root ./usr/share/doc/bloomrs/copyright  
lrwxrwxrwx root/root ./usr/lib/valkey/bloomrs.so -> ../redis/modules/bloomrs.so"
expect "file list" "$listing" "$expected"
expect "Package" "$(dpkg-deb -f "$deb" Package)" "bloomrs"
expect "Version" "$(dpkg-deb -f "$deb" Version)" "$version"
case "$(dpkg-deb -f "$deb" Depends)" in
    *"redis-server (>= 5:7.0) | valkey-server (>= 8.0)"*) ;;
    *) die "Depends: $(dpkg-deb -f "$deb" Depends)" ;;
esac
for script in postinst postrm; do
    dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - "./$script" >"$scratch/$script"
    sh -n "$scratch/$script" || die "$script is not valid sh"
done
if command -v lintian >/dev/null 2>&1; then
    step "lintian"
    lintian --fail-on error "$deb" 2>&1 | grep -v 'running with root privileges' || true
    lintian --fail-on error "$deb" >/dev/null 2>&1 || die "lintian reports errors"
    echo "lintian: no errors"
else
    echo "lintian is not installed: not run (scripts/install-deps.sh installs it)"
fi

# --- 3. the tarball's module, from any directory ----------------------------------------------

step "the tarball"
unpacked="$scratch/any dir"
mkdir -p "$unpacked"
tar -xzf "$tarball" -C "$unpacked"
tardir="$unpacked/$(basename "$tarball" .tar.gz)"
(cd "$tardir" && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS of the tarball"
expect "tarball files" "$(cd "$tardir" && ls | tr '\n' ' ')" "LICENSE README SHA256SUMS bloomrs.so "
! grep -q '@[A-Z]*@' "$tardir/README" || die "the tarball README has an unfilled placeholder"
dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/lib/redis/modules/bloomrs.so >"$scratch/deb.so"
cmp -s "$scratch/deb.so" "$tardir/bloomrs.so" || die "the tarball and the package hold different modules"
for entry in "${servers[@]}"; do
    read -r program _ _ <<<"$entry"
    start_server "tar-$program" "$program" --loadmodule "$tardir/bloomrs.so"
    check_module_loaded "$tardir/bloomrs.so"
    stop_server
    echo "$program loads the tarball's module"
done

# --- 4. the container recipe's build stage ------------------------------------------------------

step "the Dockerfile's build stage"
run_line="$(sed -n 's/^RUN \(make install .*\)$/\1/p' Dockerfile)"
[ -n "$run_line" ] || die "no 'RUN make install ...' in the Dockerfile"
out="$(sed -n 's/.*DESTDIR=\([^ ]*\).*/\1/p' <<<"$run_line")"
[ -n "$out" ] || die "the Dockerfile's make install names no DESTDIR"
staged="$scratch/image$out"
# The recipe's command, with its DESTDIR moved under the scratch directory (make takes the last
# assignment of a variable on its command line).
read -ra words <<<"$run_line"
"${words[@]}" DESTDIR="$staged" CARGO="${CARGO:-cargo}" >/dev/null
while read -r source dest; do
    [ -f "$staged$source" ] || die "the Dockerfile copies $source, which make install does not make"
    cmp -s "$staged$source" "$scratch/deb.so" || die "$source is not the packaged module"
    [ "$(stat -c %a "$staged$source")" = 755 ] || die "$source is not mode 0755"
    grep -q "\"--loadmodule\", \"$dest\"" Dockerfile || die "no image loads $dest"
    echo "COPY $source -> $dest: installed, mode 0755, loaded by CMD"
done < <(sed -n "s|^COPY --from=build $out\([^ ]*\) \([^ ]*\)$|\1 \2|p" Dockerfile)
[ "$(grep -c "^COPY --from=build $out" Dockerfile)" -ge 2 ] || die "the Dockerfile should copy the module into two images"

# --- 5. the configuration block on scratch files ------------------------------------------------

step "the configuration block"
# shellcheck source=../../packaging/debian/conf-block.sh
. packaging/debian/conf-block.sh
block="$BLOOMRS_BEGIN
loadmodule /m/bloomrs.so
$BLOOMRS_END"
printf 'port 1\nbind x' >"$scratch/nonl.conf"
bloomrs_enable "$scratch/nonl.conf" /m/bloomrs.so srv >/dev/null
expect "a file without a final newline" "$(cat "$scratch/nonl.conf")" "port 1
bind x
$block"
bloomrs_disable "$scratch/nonl.conf" srv >/dev/null
expect "after removal" "$(cat "$scratch/nonl.conf")" "port 1
bind x"
printf 'loadmodule /opt/redisbloom.so\n' >"$scratch/other.conf"
bloomrs_enable "$scratch/other.conf" /m/bloomrs.so srv 2>/dev/null
expect "a file loading RedisBloom" "$(cat "$scratch/other.conf")" "loadmodule /opt/redisbloom.so"
printf 'port 1\n' >"$scratch/target.conf"
ln -s target.conf "$scratch/link.conf"
bloomrs_enable "$scratch/link.conf" /m/bloomrs.so srv >/dev/null
[ -L "$scratch/link.conf" ] || die "the symlinked configuration was replaced by a file"
expect "through a symlink" "$(cat "$scratch/target.conf")" "port 1
$block"
printf 'a\n%s\nloadmodule /x\n' "$BLOOMRS_BEGIN" >"$scratch/open.conf"
cp "$scratch/open.conf" "$scratch/open.before"
bloomrs_disable "$scratch/open.conf" srv 2>/dev/null
cmp -s "$scratch/open.conf" "$scratch/open.before" || die "an unterminated block was edited"
printf 'port 1\n' >"$scratch/mode.conf"
chmod 0640 "$scratch/mode.conf"
[ "$(id -u)" -eq 0 ] && chown nobody:nogroup "$scratch/mode.conf"
owner="$(stat -c '%U:%G %a' "$scratch/mode.conf")"
bloomrs_enable "$scratch/mode.conf" /m/bloomrs.so srv >/dev/null
expect "owner and mode after adding" "$(stat -c '%U:%G %a' "$scratch/mode.conf")" "$owner"
bloomrs_enable "$scratch/mode.conf" /m/bloomrs.so srv >/dev/null
expect "blocks after adding twice" "$(grep -c "^$BLOOMRS_BEGIN" "$scratch/mode.conf")" "1"
bloomrs_disable "$scratch/mode.conf" srv >/dev/null
expect "owner and mode after removing" "$(stat -c '%U:%G %a' "$scratch/mode.conf")" "$owner"
expect "content after removing" "$(cat "$scratch/mode.conf")" "port 1"
echo "block: added once, removed exactly, owner and mode kept, foreign modules respected"

# --- 6. dpkg -i, the packaged servers, dpkg -r ---------------------------------------------------

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIPPED: installing the package needs root (the rest passed)"
    exit 0
fi
status="$(dpkg-query -W -f='${db:Status-Status}' bloomrs 2>/dev/null || true)"
if [ -n "$status" ] && [ "$status" != not-installed ]; then
    echo "SKIPPED: bloomrs is installed on this machine; the test installs and removes it, so it leaves it alone"
    exit 0
fi

blocks_in() { grep -cFx "$BLOOMRS_BEGIN" "$1" || true; }

# check_installed: one block per present configuration, appended to the original bytes, same
# owner and mode; the module and its link in place.
check_installed() {
    local i conf size
    for i in "${!confs[@]}"; do
        conf="${confs[$i]}"
        [ -f "$scratch/conf.$i" ] || continue
        expect "blocks in $conf" "$(blocks_in "$conf")" "1"
        size="$(stat -c %s "$scratch/conf.$i")"
        cmp -s -n "$size" "$scratch/conf.$i" "$conf" || die "$conf changed before the block"
        expect "owner and mode of $conf" "$(stat -c '%u:%g %a' "$conf")" "$(cat "$scratch/conf.$i.owner")"
    done
    expect "module mode" "$(stat -c %a /usr/lib/redis/modules/bloomrs.so)" "755"
    expect "valkey link" "$(readlink /usr/lib/valkey/bloomrs.so)" "../redis/modules/bloomrs.so"
}

# start_packaged: each packaged server with its installed configuration.
check_packaged_servers() {
    local entry program conf module
    for entry in "${servers[@]}"; do
        read -r program conf module <<<"$entry"
        start_server "pkg-$program" "$program" "$conf"
        "$@" "$module"
        stop_server
        echo "$program with $conf: ${1#check_}"
    done
}

step "dpkg -i"
save_confs
we_installed=1
dpkg -i "$deb"
check_installed
check_packaged_servers check_module_loaded

step "dpkg -i again"
dpkg -i "$deb" >/dev/null
check_installed

step "upgrading to a newer version"
newer="$scratch/newer"
dpkg-deb -R "$deb" "$newer"
sed -i "s/^Version: .*/Version: $version+packagetest1/" "$newer/DEBIAN/control"
dpkg-deb --build --root-owner-group "$newer" "$scratch/newer.deb" >/dev/null
dpkg -i "$scratch/newer.deb" >/dev/null
expect "installed version" "$(dpkg-query -W -f='${Version}' bloomrs)" "$version+packagetest1"
check_installed
check_packaged_servers check_module_loaded

step "dpkg -r"
dpkg -r bloomrs
for i in "${!confs[@]}"; do
    [ -f "$scratch/conf.$i" ] || continue
    cmp "$scratch/conf.$i" "${confs[$i]}" || die "${confs[$i]} is not as it was before"
    expect "owner and mode of ${confs[$i]}" "$(stat -c '%u:%g %a' "${confs[$i]}")" "$(cat "$scratch/conf.$i.owner")"
done
for file in /usr/lib/redis/modules/bloomrs.so /usr/lib/valkey/bloomrs.so; do
    [ ! -e "$file" ] && [ ! -L "$file" ] || die "$file is still there"
done
check_packaged_servers check_no_module
dpkg --purge bloomrs >/dev/null
status="$(dpkg-query -W -f='${db:Status-Status}' bloomrs 2>/dev/null || true)"
[ -z "$status" ] || [ "$status" = not-installed ] || die "after purge, bloomrs is $status"
echo "removed: configuration byte-identical, files gone, servers start clean"
