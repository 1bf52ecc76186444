# blobdrop: one static-ish binary on a minimal base, data in the /data volume.

# --- build: the official Rust image; dependencies get a layer of their own ---
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
# Compile the dependencies against a stub crate, so editing blobdrop's code reuses this layer.
RUN mkdir src \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src
COPY src ./src
# The queries are checked at compile time against .sqlx/ (scripts/sqlx-prepare), not a database.
COPY .sqlx ./.sqlx
ENV SQLX_OFFLINE=true
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
# The commit `blobdrop --version` names: the build context has no .git, so it is an argument
# (`--build-arg BLOBDROP_COMMIT=$(git rev-parse --short=12 HEAD)`; build.rs reads it).
ARG BLOBDROP_COMMIT=unknown
# touch: the copied sources may be older than the stub's build, and cargo compares times.
RUN touch src/main.rs src/lib.rs \
    && cargo build --release --locked \
    && mkdir /data

# --- run: glibc and libgcc only, no shell, no package manager, user nonroot (65532) ---
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/blobdrop /usr/local/bin/blobdrop
COPY --from=build --chown=65532:65532 /data /data
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
