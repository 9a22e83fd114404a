#!/usr/bin/env bash
# Builds bloomrs's release artifacts into dist/ (DIST_DIR=...):
#
#   bloomrs_<version>_<debian arch>.deb          the Debian package (where dpkg-deb exists)
#   bloomrs-<version>-linux-<arch>.tar.gz        bloomrs.so, LICENSE, README, SHA256SUMS
#   SHA256SUMS                                   of the two
#
# Both are reproducible: the module is built with every build path mapped away
# (--remap-path-prefix), stripped, and packed with sorted names, owner root, and every time
# set to SOURCE_DATE_EPOCH (the last commit's time unless set), so two builds of one commit
# give the same bytes wherever they run. The module is built in target/package, apart from
# the release build, whose flags it does not share.
#
# Usage:
#   scripts/package/build.sh            the artifacts above
#   scripts/package/build.sh --so-only  only the stripped module, target/package/bloomrs.so
#                                       (what `make install` installs)
set -euo pipefail

cd "$(dirname "$0")/../.."
root="$PWD"
cargo="${CARGO:-cargo}"
dist="${DIST_DIR:-dist}"
work="target/package"
umask 022
export LC_ALL=C TZ=UTC

die() {
    echo "error: $*" >&2
    exit 1
}

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || die "no version in Cargo.toml"

# The Debian changelog's newest entry names the version and the maintainer.
changelog=packaging/debian/changelog
deb_version="$(sed -n '1s/^bloomrs (\([^)]*\)).*/\1/p' "$changelog")"
maintainer="$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$changelog" | head -n 1)"

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || true)"
fi
if [ -z "$SOURCE_DATE_EPOCH" ]; then
    # Not a git checkout (e.g. a container build context): the changelog's date.
    SOURCE_DATE_EPOCH="$(date -d "$(sed -n 's/^ -- .*>  //p' "$changelog" | head -n 1)" +%s)"
fi
export SOURCE_DATE_EPOCH

# The module, built with no path of this machine in it (cargo's registry sources and this
# checkout are the paths that would otherwise end up in panic locations).
build_module() {
    local cargo_home="${CARGO_HOME:-$HOME/.cargo}" flags
    # Passed encoded (0x1f between flags), so paths with spaces stay whole.
    read -ra flags <<<"${RUSTFLAGS:-}"
    flags+=("--remap-path-prefix=$cargo_home=/cargo" "--remap-path-prefix=$root=/bloomrs")
    CARGO_ENCODED_RUSTFLAGS="$(IFS=$'\x1f' && echo "${flags[*]}")" \
        "$cargo" build --release --locked --target-dir "$work" >&2
    strip --strip-unneeded --remove-section=.comment --remove-section=.note \
        -o "$work/bloomrs.so" "$work/release/libbloomrs.so"
    chmod 0755 "$work/bloomrs.so"
    if grep -aqF -e "$root" -e "$cargo_home" "$work/bloomrs.so"; then
        die "$work/bloomrs.so still holds a build path"
    fi
}

# Sets every time under DIR to SOURCE_DATE_EPOCH.
clamp_times() {
    find "$1" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

# The newest glibc symbol version the module needs, e.g. 2.34.
glibc_needed() {
    objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1
}

# What dpkg-shlibdeps says the module needs from the system's libraries (libc6, libgcc-s1).
shlibs_depends() {
    local scratch="$work/shlibs"
    rm -rf "$scratch"
    mkdir -p "$scratch/debian"
    printf 'Source: bloomrs\n\nPackage: bloomrs\nArchitecture: any\n' >"$scratch/debian/control"
    # It warns that the module is not in a package's build directory yet; only its answer counts.
    (cd "$scratch" && dpkg-shlibdeps -O "$root/$1" 2>/dev/null) | sed -n 's/^shlibs:Depends=//p'
    rm -rf "$scratch"
}

# dpkg's Installed-Size: KiB per regular file (rounded up), 1 per directory and link.
installed_size() {
    find "$1" -mindepth 1 -path "$1/DEBIAN" -prune -o -printf '%y %s\n' |
        awk '{ kib += ($1 == "f") ? int(($2 + 1023) / 1024) : 1 } END { print kib }'
}

build_deb() {
    local arch stage="$work/deb" doc deb
    arch="$(dpkg --print-architecture)"
    deb="$dist/bloomrs_${version}_${arch}.deb"
    rm -rf "$stage"
    doc="$stage/usr/share/doc/bloomrs"
    install -d "$stage/DEBIAN" "$stage/usr/lib/redis/modules" "$stage/usr/lib/valkey" "$doc"
    install -m 0755 "$work/bloomrs.so" "$stage/usr/lib/redis/modules/bloomrs.so"
    ln -s ../redis/modules/bloomrs.so "$stage/usr/lib/valkey/bloomrs.so"
    install -m 0644 packaging/debian/copyright packaging/debian/README.Debian "$doc/"
    gzip -9n <"$changelog" >"$doc/changelog.gz"
    chmod 0644 "$doc/changelog.gz"

    local script
    for script in postinst postrm; do
        awk -v block=packaging/debian/conf-block.sh '
            $0 == "#CONFBLOCK#" { while ((getline line < block) > 0) print line; next }
            { print }
        ' "packaging/debian/$script.in" >"$stage/DEBIAN/$script"
        chmod 0755 "$stage/DEBIAN/$script"
    done
    sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@MAINTAINER@/$maintainer/" \
        -e "s/@INSTALLED_SIZE@/$(installed_size "$stage")/" \
        -e "s/@SHLIBS_DEPENDS@/$(shlibs_depends "$work/bloomrs.so")/" \
        packaging/debian/control.in >"$stage/DEBIAN/control"
    (cd "$stage" && find usr -type f | sort | xargs md5sum) >"$stage/DEBIAN/md5sums"
    chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
    clamp_times "$stage"
    rm -f "$deb"
    dpkg-deb --build --root-owner-group -Zxz --threads-max=1 "$stage" "$deb" >/dev/null
    echo "$deb"
}

build_tarball() {
    local arch name stage tarball
    arch="$(uname -m)"
    name="bloomrs-$version-linux-$arch"
    stage="$work/tar"
    tarball="$dist/$name.tar.gz"
    rm -rf "$stage"
    install -d "$stage/$name"
    install -m 0755 "$work/bloomrs.so" "$stage/$name/bloomrs.so"
    install -m 0644 LICENSE "$stage/$name/LICENSE"
    sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" \
        -e "s/@GLIBC@/$(glibc_needed "$work/bloomrs.so")/g" \
        packaging/tarball/README >"$stage/$name/README"
    (cd "$stage/$name" && sha256sum bloomrs.so LICENSE README >SHA256SUMS)
    chmod 0644 "$stage/$name/README" "$stage/$name/SHA256SUMS"
    clamp_times "$stage"
    tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
        --mtime="@$SOURCE_DATE_EPOCH" -C "$stage" -cf - "$name" | gzip -9n >"$tarball"
    echo "$tarball"
}

main() {
    [ "$deb_version" = "$version" ] ||
        die "$changelog starts with $deb_version, Cargo.toml says $version: add a changelog entry"
    grep -q "^## $version\b" CHANGELOG.md || die "CHANGELOG.md has no '## $version' section"
    build_module
    if [ "${1:-}" = "--so-only" ]; then
        echo "$work/bloomrs.so"
        return
    fi
    mkdir -p "$dist"
    local artifacts=()
    if command -v dpkg-deb >/dev/null 2>&1; then
        artifacts+=("$(build_deb)")
    else
        echo "no dpkg-deb here: building the tarball only" >&2
    fi
    artifacts+=("$(build_tarball)")
    (cd "$dist" && sha256sum "${artifacts[@]##*/}" >SHA256SUMS)
    printf '%s\n' "${artifacts[@]}"
}

main "$@"
