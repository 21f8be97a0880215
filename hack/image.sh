#!/bin/bash
# Build the runlet image with podman, with no registry: runlet's static binary is built on this host
# and put on a base assembled here from local files (the host's CA certificates, /etc/passwd, /tmp),
# through the repository's Dockerfile (BINARY=prebuilt).
# Env:
#   VERSION     stamped into the binary, label and tag     default: appVersion of charts/runlet
#   COMMIT      stamped into the binary and label          default: git HEAD (+ -dirty)
#   IMAGE       the image to build                         default: localhost/runlet:$VERSION
#   BASE_IMAGE  the base; set it to use a registry's       default: localhost/runlet/base:latest (built here)
#   RUNLET_REBUILD_IMAGES=1  rebuild the local base too
# Prints the image name last on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
VERSION=${VERSION:-$(awk -F'"' '/^appVersion:/ {print $2}' "$REPO_ROOT/charts/runlet/Chart.yaml")}
[ -n "$VERSION" ] || die "no appVersion in charts/runlet/Chart.yaml"
if [ -z "${COMMIT:-}" ]; then
  COMMIT=$(git -C "$REPO_ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  git -C "$REPO_ROOT" diff --quiet HEAD 2>/dev/null || COMMIT=$COMMIT-dirty
fi
IMAGE=${IMAGE:-localhost/runlet:$VERSION}
LOCAL_BASE=localhost/runlet/base:latest
BASE_IMAGE=${BASE_IMAGE:-$LOCAL_BASE}
command -v podman >/dev/null || die "podman is not installed (hack/install-deps.sh)"

CTX=$(mktemp -d); trap 'rm -rf "$CTX"' EXIT

# base: what a static Go binary needs at run time, as distroless/static has it
if [ "$BASE_IMAGE" = "$LOCAL_BASE" ] && { [ "${RUNLET_REBUILD_IMAGES:-0}" = 1 ] || ! podman image exists "$LOCAL_BASE"; }; then
  CERTS=/etc/ssl/certs/ca-certificates.crt
  [ -f "$CERTS" ] || die "$CERTS is missing (apt-get install ca-certificates)"
  ROOT=$CTX/base; mkdir -p "$ROOT"/{etc/ssl/certs,tmp,home/nonroot,root}
  cp "$CERTS" "$ROOT/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$ROOT/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$ROOT/etc/group"
  echo 'hosts: files dns' >"$ROOT/etc/nsswitch.conf"
  chmod 1777 "$ROOT/tmp"; chown 65532:65532 "$ROOT/home/nonroot"
  tar --numeric-owner -C "$ROOT" -cf "$CTX/base.tar" .
  podman import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    "$CTX/base.tar" "$LOCAL_BASE" >/dev/null
  rm -rf "$ROOT" "$CTX/base.tar"
  log "base image $LOCAL_BASE assembled from local files"
fi

log "building runlet $VERSION ($COMMIT), static"
mkdir -p "$CTX/context"
(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" \
  -o "$CTX/context/runlet" ./cmd/runlet)
podman build --quiet -f "$REPO_ROOT/Dockerfile" \
  --build-arg BINARY=prebuilt --build-arg BASE_IMAGE="$BASE_IMAGE" \
  --build-arg VERSION="$VERSION" --build-arg COMMIT="$COMMIT" \
  --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  -t "$IMAGE" "$CTX/context" >/dev/null
log "built $IMAGE"
echo "$IMAGE"
