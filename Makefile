# bloomrs: `make run` starts a server with the module, `make test` runs every test,
# `make bench` measures it (results in docs/bench/).
CARGO ?= cargo
PORT ?= 6379
# redis, valkey, or empty for both (make test; install-deps reads it too).
SERVER ?=
export SERVER

.PHONY: all deps build run test bench lint fuzz chaos clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

run: build
	PORT=$(PORT) scripts/run.sh

# Unit tests of the pure core, then the integration tests with the freshly built module against
# each server: Redis (redis-server) and Valkey (valkey-server), one summary line each.
# SERVER=redis or SERVER=valkey runs the integration suite on one of them.
test: build
	$(CARGO) build --release --features fault-injection --target-dir target/fault-injection
	$(CARGO) test --release --lib
	CARGO="$(CARGO)" SERVER="$(SERVER)" scripts/integration.sh

# Server time per call next to GETBIT/SISMEMBER, and the feed de-duplication simulation; JSON and
# PNG into docs/bench/. BENCH_ARGS="--quick" for a short run, "--module PATH" to compare a build.
bench:
	CARGO="$(CARGO)" scripts/bench/run.sh $(BENCH_ARGS)

# Every fuzz target for FUZZ_SECONDS each (default 60), seeded from the RedisBloom fixtures.
fuzz:
	scripts/fuzz.sh

# The long chaos run (CHAOS_OPS operations, default 1,000,000), then the randomized replication
# test for REPL_OPS operations (default 200,000) on each server.
chaos:
	scripts/chaos.sh

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

clean:
	$(CARGO) clean
