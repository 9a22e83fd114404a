# Container images with bloomrs loaded by default, in the shape of the valkey-bundle and Redis
# images: a build stage makes the module, and a final stage puts it in the base image's
# modules directory and loads it at start.
#
#   docker build -t bloomrs:valkey .                  Valkey 8 with bloomrs (the default)
#   docker build -t bloomrs:redis --target redis .    Redis 7.4 with bloomrs
#   docker run -p 6379:6379 bloomrs:valkey
#
# Arguments for the server go after the server's name, keeping the --loadmodule, e.g.
#   docker run bloomrs:redis redis-server --loadmodule /usr/lib/redis/modules/bloomrs.so --maxmemory 1gb
#
# The module links against glibc and is built on Debian bookworm, so it loads into the
# Debian-based images (bookworm or later); the Alpine (musl) variants cannot load it. The build stage's command is what `make package-test` runs (into
# a scratch directory) and checks against the COPY and CMD lines below.

ARG RUST_IMAGE=rust:1-bookworm
ARG REDIS_IMAGE=redis:7.4
ARG VALKEY_IMAGE=valkey/valkey:8.0

FROM ${RUST_IMAGE} AS build
# bindgen (in the redis-module crate's build script) needs libclang.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libclang-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make install PREFIX=/usr DESTDIR=/out

FROM ${REDIS_IMAGE} AS redis
COPY --from=build /out/usr/lib/redis/modules/bloomrs.so /usr/lib/redis/modules/bloomrs.so
CMD ["redis-server", "--loadmodule", "/usr/lib/redis/modules/bloomrs.so"]

FROM ${VALKEY_IMAGE} AS valkey
COPY --from=build /out/usr/lib/redis/modules/bloomrs.so /usr/lib/valkey/bloomrs.so
CMD ["valkey-server", "--loadmodule", "/usr/lib/valkey/bloomrs.so"]
