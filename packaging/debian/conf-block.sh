# The loadmodule block that postinst adds to a server's configuration and postrm takes out
# again (pasted into both scripts when the package is built). The block is three marked lines
# at the end of the file; everything else in the file is left byte for byte. The file is
# rewritten by a rename in its own directory, with its owner, group and mode. No server is
# restarted: the administrator decides when.

BLOOMRS_BEGIN="# BEGIN bloomrs (added by the bloomrs package, removed with it)"
BLOOMRS_END="# END bloomrs"

# bloomrs_swap NEW CONF: moves NEW over CONF with CONF's owner, group and mode.
bloomrs_swap() {
    if chown --reference="$2" "$1" && chmod --reference="$2" "$1" && mv -f "$1" "$2"; then
        return 0
    fi
    rm -f "$1"
    return 1
}

# bloomrs_enable CONF MODULE SERVICE: adds the block loading MODULE to CONF, unless CONF is
# missing, already has the block, or already loads a Bloom module (bloomrs by another path,
# RedisBloom or valkey-bloom: two modules cannot both register BF.*).
bloomrs_enable() {
    [ -f "$1" ] || return 0
    conf=$(readlink -f "$1")
    if grep -Fqx "$BLOOMRS_BEGIN" "$conf"; then
        return 0
    fi
    other=$(grep -E '^[[:space:]]*loadmodule[[:space:]]' "$conf" |
        grep -E '(bloomrs|redisbloom|rebloom|valkey[-_]bloom)[^/[:space:]]*\.so' | head -n 1) || true
    if [ -n "$other" ]; then
        echo "bloomrs: $1 already loads a Bloom module ($other); not enabled there" >&2
        return 0
    fi
    new=$(mktemp "$conf.bloomrs-XXXXXX")
    {
        cat "$conf"
        # A file without a final newline gets one, so the block starts on its own line.
        [ -z "$(tail -c 1 "$conf")" ] || echo
        printf '%s\nloadmodule %s\n%s\n' "$BLOOMRS_BEGIN" "$2" "$BLOOMRS_END"
    } >"$new" || { rm -f "$new"; return 1; }
    bloomrs_swap "$new" "$conf"
    echo "bloomrs: enabled in $1; it loads when the server restarts (systemctl restart $3)"
}

# bloomrs_disable CONF SERVICE: takes every block out of CONF. A block whose end marker was
# deleted is left alone, rather than guessing where it ends.
bloomrs_disable() {
    [ -f "$1" ] || return 0
    conf=$(readlink -f "$1")
    grep -Fqx "$BLOOMRS_BEGIN" "$conf" || return 0
    new=$(mktemp "$conf.bloomrs-XXXXXX")
    status=0
    awk -v begin="$BLOOMRS_BEGIN" -v end="$BLOOMRS_END" '
        $0 == begin { if (inside) printf "%s", held; inside = 1; held = "" }
        inside { held = held $0 "\n"; if ($0 == end) { inside = 0; held = "" } next }
        { print }
        END { if (inside) { printf "%s", held; exit 3 } }
    ' "$conf" >"$new" || status=$?
    if [ "$status" -ne 0 ]; then
        rm -f "$new"
        echo "bloomrs: $1 has '$BLOOMRS_BEGIN' without '$BLOOMRS_END'; left as it is" >&2
        return 0
    fi
    bloomrs_swap "$new" "$conf"
    echo "bloomrs: removed from $1; a running $2 keeps the module until it restarts, and data holding Bloom or Cuckoo filters loads only with a bf module"
}
