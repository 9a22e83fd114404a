# bloomrs: `make run` starts a server with the module, `make test` runs every test,
# `make bench` measures it (results in docs/bench/), `make package` builds the Debian package
# and the tarball into dist/, `make install` installs the module.
CARGO ?= cargo
PORT ?= 6379
# Which servers `make test` runs the integration suite on: redis (Redis 7.0), valkey (Valkey 8.0),
# redis8 (Redis 8.0.x), valkey81 (Valkey 8.1.x), valkey9 (Valkey 9.1.x), several separated by
# commas, or empty for all five. install-deps reads it too: redis8 and valkey81 are built from
# Debian 13's source packages, valkey9 from Debian 14's, into ~/.cache/bloomrs/servers once,
# then reused.
SERVER ?=
export SERVER
# `make install`: the module goes to $(DESTDIR)$(PREFIX)/lib/redis/modules/bloomrs.so, with a
# link in $(PREFIX)/lib/valkey/, and the notes to $(PREFIX)/share/doc/bloomrs/.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps build run test bench lint fuzz chaos asan clean package package-test package-test-debian13 package-test-debian14 package-repro install

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

run: build
	PORT=$(PORT) scripts/run.sh

# Unit tests of the pure core, then the integration tests with the freshly built module against
# each server: Redis 7.0, Valkey 8.0, Redis 8.0, Valkey 8.1 and Valkey 9.1, one summary line each.
# SERVER=redis8 (etc.) runs the integration suite on one of them; the suites run at the same
# time (SUITES_AT_ONCE=1 runs them one after the other). Where dpkg-deb is present, the package
# test follows. Servers still to build and the package test's Debian roots are made in the
# background while the module compiles (scripts/test.sh).
test:
	CARGO="$(CARGO)" SERVER="$(SERVER)" scripts/test.sh

# The Debian package and the tarball, reproducibly, into dist/ (scripts/package/build.sh).
package: deps
	CARGO="$(CARGO)" scripts/package/build.sh

# Builds the package twice (same bytes), runs lintian, installs it with dpkg and starts the
# packaged servers with their own configuration, removes it, and loads the tarball's module;
# puts the machine back as it was (scripts/package/test.sh). Then, as root with debootstrap,
# the same package in a Debian 13 root with Debian 13's own redis-server 8.0 and valkey-server
# 8.1, and in a Debian 14 root with its redis-server 8.0 and valkey-server 9.1.
package-test: deps
	CARGO="$(CARGO)" scripts/package/test.sh
	@if [ "$$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null 2>&1; then \
	CARGO="$(CARGO)" scripts/package/debian.sh 13 && CARGO="$(CARGO)" scripts/package/debian.sh 14; \
	else echo "not root or no debootstrap: the Debian 13 and 14 package tests not run"; fi

# The package in a Debian 13 root (made once with debootstrap, kept in ~/.cache/bloomrs/debian13):
# installed, loaded by Debian 13's packaged redis-server 8.0 and valkey-server 8.1 started from
# their installed configuration, removed cleanly (scripts/package/debian.sh).
package-test-debian13: deps
	CARGO="$(CARGO)" scripts/package/debian.sh 13

# The same in a Debian 14 (forky, or sid) root, ~/.cache/bloomrs/debian14, with its packaged
# redis-server 8.0 and valkey-server 9.1.
package-test-debian14: deps
	CARGO="$(CARGO)" scripts/package/debian.sh 14

# Two cold builds of the current commit in fresh clones at different paths: the same bytes.
package-repro: deps
	CARGO="$(CARGO)" scripts/package/repro.sh

install:
	@so="$$(CARGO="$(CARGO)" scripts/package/build.sh --so-only)" && \
	install -D -m 0755 "$$so" "$(DESTDIR)$(PREFIX)/lib/redis/modules/bloomrs.so" && \
	install -d "$(DESTDIR)$(PREFIX)/lib/valkey" && \
	ln -sfn ../redis/modules/bloomrs.so "$(DESTDIR)$(PREFIX)/lib/valkey/bloomrs.so" && \
	install -D -m 0644 -t "$(DESTDIR)$(PREFIX)/share/doc/bloomrs" LICENSE README.md CHANGELOG.md && \
	echo "installed $(PREFIX)/lib/redis/modules/bloomrs.so (and $(PREFIX)/lib/valkey/bloomrs.so)"

# Server time per call next to GETBIT/SISMEMBER, and the feed de-duplication simulation; JSON and
# PNG into docs/bench/. BENCH_ARGS="--quick" for a short run, "--module PATH" to compare a build.
bench:
	CARGO="$(CARGO)" scripts/bench/run.sh $(BENCH_ARGS)

# Every fuzz target for FUZZ_SECONDS each (default 60), seeded from the corpora kept in
# fuzz/seeds/, the RedisBloom fixtures and genuine values with one header byte changed.
# FUZZ_KEEP=1 minimizes each corpus back into fuzz/seeds/.
fuzz:
	scripts/fuzz.sh

# The long chaos run (CHAOS_OPS operations, default 1,000,000), then the randomized replication
# test for REPL_OPS operations (default 200,000) on each server.
chaos:
	scripts/chaos.sh

# The chaos test (CHAOS_OPS, default 200,000) and the randomized replication test (REPL_OPS,
# default 50,000) against an AddressSanitizer build of the module on Redis 7.0; fails on any
# sanitizer report (scripts/asan.sh). Needs the nightly toolchain.
asan:
	scripts/asan.sh

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
