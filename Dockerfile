# syntax=docker/dockerfile:1
# reqgate: one static binary (CGO off: SQLite is modernc.org/sqlite, pure Go) on a distroless base, run as the
# nonroot user (uid 65532). Build: docker build -t reqgate . ; run the single-node demo:
#   docker run --rm -p 8080:8080 -p 9090:9090 -v reqgate-data:/var/lib/reqgate reqgate
# Other roles: docker run ... reqgate gateway --listen=:8080 --admin-listen=:9090 --upstream=http://core:8081

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false"
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download && go mod verify
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -ldflags="-s -w" -o /out/reqgate ./cmd/reqgate \
 && test "$(go list -m -f '{{.Version}}' modernc.org/libc)" = v1.77.1
# The SQLite directory, owned by nonroot so a fresh volume mounted there is writable.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reqgate /usr/local/bin/reqgate
COPY --from=build --chown=65532:65532 /out/data /var/lib/reqgate
USER 65532:65532
VOLUME ["/var/lib/reqgate"]
# 8080 public (serve, gateway), 8081 core, 9090 admin (/metrics, /healthz, /readyz).
EXPOSE 8080 8081 9090
ENTRYPOINT ["/usr/local/bin/reqgate"]
# Inside a container 127.0.0.1 is unreachable from outside: listen on every interface.
CMD ["serve", "--listen=:8080", "--admin-listen=:9090", "--db=/var/lib/reqgate/reqgate.db"]
