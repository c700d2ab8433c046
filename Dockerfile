# syntax=docker/dockerfile:1
# reqgate: one static binary (CGO off: SQLite is modernc.org/sqlite, pure Go) on a distroless base, run as the
# nonroot user (uid 65532). Build with `make image` (tags VERSION and stamps the revision), or by hand:
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t ghcr.io/reqgate/reqgate:0.1.0 .
# Run the single-node demo:
#   docker run --rm -p 8080:8080 -p 127.0.0.1:9090:9090 -v reqgate-data:/var/lib/reqgate ghcr.io/reqgate/reqgate:0.1.0
# Other roles: docker run ... reqgate gateway --listen=:8080 --admin-listen=:9090 --upstream=http://core:8081
#
# Base images: the tags below are not pinned by digest, because no digest could be read from the registry where
# this file was written, and a digest copied unverified could name another image. Pin them for a release by
# passing the digest the registry reports (crane digest gcr.io/distroless/static-debian12:nonroot):
#   --build-arg RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:...
#   --build-arg BUILD_IMAGE=golang:1.26@sha256:...
ARG BUILD_IMAGE=golang:1.26
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot
# VERSION must equal the VERSION file and the chart's appVersion (cmd/reqgate TestReleaseVersionsAgree).
ARG VERSION=0.1.0
ARG REVISION=""
ARG CREATED=""

FROM ${BUILD_IMAGE} AS build
ARG VERSION
ARG REVISION
ARG CREATED
WORKDIR /src
# No .git in the build context: the revision and its time come from the build arguments instead.
ENV CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false"
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download && go mod verify
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags="-s -w -X main.version=${VERSION} -X main.vcsRevision=${REVISION} -X main.vcsTime=${CREATED}" \
      -o /out/reqgate ./cmd/reqgate \
 && test "$(go list -m -f '{{.Version}}' modernc.org/libc)" = v1.77.1
# The SQLite directory, owned by nonroot so a fresh volume mounted there is writable.
RUN mkdir -p /out/data

FROM ${RUNTIME_IMAGE}
ARG VERSION
ARG REVISION
ARG CREATED
LABEL org.opencontainers.image.title="reqgate" \
      org.opencontainers.image.description="XML requirements service behind a rate-limiting, caching gateway" \
      org.opencontainers.image.source="https://github.com/reqgate/reqgate" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /out/reqgate /usr/local/bin/reqgate
COPY --from=build --chown=65532:65532 /out/data /var/lib/reqgate
USER 65532:65532
VOLUME ["/var/lib/reqgate"]
# 8080 public (serve, gateway), 8081 core, 9090 admin (/metrics, /healthz, /readyz). The admin listener binds every
# interface here, so it serves POST /purge (and, with admin.pprof, the profiler, off by default) only with
# admin.token_file (REQGATE_ADMIN_TOKEN_FILE): without a token they are off.
EXPOSE 8080 8081 9090
ENTRYPOINT ["/usr/local/bin/reqgate"]
# Inside a container 127.0.0.1 is unreachable from outside: listen on every interface.
CMD ["serve", "--listen=:8080", "--admin-listen=:9090", "--db=/var/lib/reqgate/reqgate.db"]
