# The runlet image: runlet's static binary on a minimal base (CA certificates,
# /etc/passwd with root and nonroot, /tmp). It drives podman through a socket
# (mounted from the host, or reached over tcp:// or ssh://), so it holds
# nothing else.
#
# With a registry:  podman build -t runlet .   (or docker build): compiles
#                   runlet in GO_IMAGE and puts it on BASE_IMAGE.
# Without one:      make image (hack/image.sh) builds the binary on this host and
#                   the base from local files, then this file with
#                   BINARY=prebuilt, the binary being all of the build context.
ARG GO_IMAGE=docker.io/library/golang:1.26
ARG BASE_IMAGE=gcr.io/distroless/static-debian12
ARG BINARY=build

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.1.0-dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
    -o /out/runlet ./cmd/runlet

FROM scratch AS prebuilt
COPY runlet /out/runlet

FROM ${BINARY} AS binary

FROM ${BASE_IMAGE}
ARG VERSION=v0.1.0-dev
ARG COMMIT=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="runlet" \
      org.opencontainers.image.description="A virtual kubelet that runs its node's pods on podman" \
      org.opencontainers.image.source="https://github.com/runlet/runlet" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=binary /out/runlet /usr/local/bin/runlet
# nonroot; the chart runs it as root only where it needs the host's podman socket
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/runlet"]
