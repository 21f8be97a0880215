# The runlet image: runlet's static binary on a minimal base (CA certificates,
# /etc/passwd with root and nonroot, /tmp). It drives podman through a socket
# (mounted from the host, or reached over tcp:// or ssh://), or runs the pods
# with runc itself (--runtime=runc). Beside it, what runlet runs in the
# container, so that a host needs neither CNI plugins nor runc of its own:
# Debian's CNI plugins bridge, host-local and portmap in /usr/lib/cni,
# iptables, runc and conmon, the glibc and libraries they load
# (hack/image.sh --rootfs collects them), and runlet-pause, the runc
# backend's pause program.
#
# With a registry:  podman build -t runlet .   (or docker build): compiles
#                   runlet in GO_IMAGE (Debian-based: the network's files come
#                   from its containernetworking-plugins and iptables packages)
#                   and puts it on BASE_IMAGE.
# Without one:      make image (hack/image.sh) builds the binary on this host,
#                   the base and the network's files from local files, then
#                   this file with BINARY=prebuilt, the binary and rootfs/
#                   being all of the build context.
ARG GO_IMAGE=docker.io/library/golang:1.26
ARG BASE_IMAGE=gcr.io/distroless/static-debian12
ARG BINARY=build

FROM ${GO_IMAGE} AS build
RUN apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends containernetworking-plugins iptables runc conmon >/dev/null && \
    rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN bash hack/image.sh --rootfs /out/rootfs
ARG VERSION=v0.1.0-dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
    -o /out/ ./cmd/runlet ./cmd/runlet-pause

FROM scratch AS prebuilt
COPY runlet runlet-pause /out/
COPY rootfs /out/rootfs

FROM ${BINARY} AS binary

FROM ${BASE_IMAGE}
ARG VERSION=v0.1.0-dev
ARG COMMIT=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="runlet" \
      org.opencontainers.image.description="A virtual kubelet that runs its node's pods on podman or runc" \
      org.opencontainers.image.source="https://github.com/runlet/runlet" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=binary /out/rootfs/ /
COPY --from=binary /out/runlet /out/runlet-pause /usr/local/bin/
# go-iptables and the CNI plugins find iptables in /usr/sbin
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# nonroot; the chart runs it as root only where it needs the host (its podman socket, or runc)
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/runlet"]
