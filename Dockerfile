# syntax=docker/dockerfile:1
# guidepub in a container: one static binary on a distroless base, running
# as an unprivileged user, configured only through GUIDEPUB_* environment
# variables, writing only below /data. See README.md, "Deployment".
#
#   docker build -t guidepub .
#   docker run --read-only -v guidepub-data:/data -p 8080:8080 guidepub sidecar

# Build stage: the same command as `make build` (a static, trimmed binary).
FROM golang:1.26.8 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/guidepub ./cmd/guidepub
# The volume's folders, owned by the runtime user (distroless has no shell
# to create them there).
RUN mkdir -p /out/data/bundles /out/data/public /out/data/private

# The health check needs an HTTP client and distroless has none: take
# busybox's statically linked wget applet, alone, under the name wget.
FROM busybox:1.37.0-musl AS wget

# Runtime stage: CA certificates, time zones and /etc/passwd, plus the two
# binaries and the volume folders.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/guidepub /usr/local/bin/guidepub
COPY --from=wget /bin/busybox /usr/local/bin/wget
COPY --from=build --chown=65532:65532 /out/data /data
# Defaults for the volume's folders: bundles, the public tree (--out of
# export and watch, --dir of serve, --from of publish) and the private tree.
ENV GUIDEPUB_ADDR=:8080 \
    GUIDEPUB_SRC=/data/bundles \
    GUIDEPUB_OUT=/data/public \
    GUIDEPUB_DIR=/data/public \
    GUIDEPUB_FROM=/data/public \
    GUIDEPUB_PRIVATE=/data/private
VOLUME ["/data"]
WORKDIR /data
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/wget", "-q", "-T", "4", "-O", "/dev/null", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/guidepub"]
CMD ["sidecar"]
