# blobdrop: one binary on a minimal base, data in the /data volume.
#
# Build it:  docker build --build-arg BLOBDROP_COMMIT=$(git rev-parse --short=12 HEAD) -t blobdrop .
# The base images are arguments whose defaults are the public images; a machine that cannot reach
# them names its own (scripts/image-check makes a local stand-in for the runtime base from Debian
# packages, and runs this file's runtime stage over the binary the tests built: BINARY_STAGE=prebuilt).
ARG RUST_IMAGE=rust:1.95-slim-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot
# Where /blobdrop and /data come from: `build` (compiled below) or `prebuilt` (./blobdrop in the context).
ARG BINARY_STAGE=build

# --- build: the official Rust image; dependencies get a layer of their own ---
FROM ${RUST_IMAGE} AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
# The workspace's other members: their manifests (and the domain's build script) for the stub build.
COPY crates/domain/Cargo.toml crates/domain/build.rs ./crates/domain/
COPY crates/store-core/Cargo.toml ./crates/store-core/
COPY crates/store-sqlite/Cargo.toml ./crates/store-sqlite/
COPY crates/store-postgres/Cargo.toml ./crates/store-postgres/
COPY crates/store/Cargo.toml ./crates/store/
COPY crates/services/Cargo.toml ./crates/services/
COPY crates/web/Cargo.toml ./crates/web/
# Compile the dependencies against stub crates, so editing blobdrop's code reuses this layer
# (crates/store's root is src/mod.rs, its Cargo.toml says why).
RUN mkdir src crates/domain/src crates/store-core/src crates/store-sqlite/src crates/store-postgres/src \
        crates/store/src crates/services/src crates/web/src \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs crates/domain/src/lib.rs crates/store-core/src/lib.rs crates/store-sqlite/src/lib.rs \
        crates/store-postgres/src/lib.rs crates/store/src/mod.rs crates/services/src/lib.rs \
        crates/web/src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src crates/domain/src crates/store-core/src crates/store-sqlite/src crates/store-postgres/src \
        crates/store/src crates/services/src crates/web/src
COPY src ./src
# Each backend crate's queries are checked at compile time against its .sqlx/ (scripts/sqlx-prepare),
# not a database: COPY takes those folders with the crates.
COPY crates ./crates
ENV SQLX_OFFLINE=true
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
# The commit `blobdrop --version` names: the build context has no .git, so it is an argument
# (`--build-arg BLOBDROP_COMMIT=$(git rev-parse --short=12 HEAD)`; crates/domain/build.rs reads it).
ARG BLOBDROP_COMMIT=unknown
# touch: the copied sources may be older than the stub's build, and cargo compares times.
RUN touch src/main.rs src/lib.rs crates/domain/src/lib.rs crates/store-core/src/lib.rs crates/store-sqlite/src/lib.rs \
        crates/store-postgres/src/lib.rs crates/store/src/mod.rs crates/services/src/lib.rs \
        crates/web/src/lib.rs \
    && cargo build --release --locked \
    && cp target/release/blobdrop /blobdrop \
    && mkdir /data

# --- prebuilt: a binary built outside (`cargo build --release`), with an empty data folder ---
FROM scratch AS prebuilt
COPY blobdrop /blobdrop
COPY data /data

FROM ${BINARY_STAGE} AS binary

# --- run: glibc and libgcc only, no shell, no package manager, user nonroot (65532) ---
FROM ${RUNTIME_IMAGE}
COPY --from=binary /blobdrop /usr/local/bin/blobdrop
COPY --from=binary --chown=65532:65532 /data /data
ENV BLOBDROP_DB=/data/blobdrop.db \
    BLOBDROP_BIND=0.0.0.0 \
    BLOBDROP_PORT=4001
VOLUME /data
EXPOSE 4001
USER 65532:65532
# A minimal image has no curl: the binary checks its own health.
HEALTHCHECK --interval=30s --timeout=10s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/blobdrop", "healthcheck"]
# Exec form: the server is PID 1 and gets SIGTERM from `docker stop` itself.
ENTRYPOINT ["/usr/local/bin/blobdrop"]
CMD ["serve"]
