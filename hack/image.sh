#!/bin/bash
# Build the runlet image with podman, with no registry: runlet's static binary is built on this host
# and put on a base assembled here from local files (the host's CA certificates, /etc/passwd, /tmp),
# through the repository's Dockerfile (BINARY=prebuilt), with what the pod network and the runc backend
# run in the runlet container taken from this host's packages too (see helper_rootfs).
# Usage: hack/image.sh               build the image
#        hack/image.sh --rootfs DIR  only copy the pod network's and the runc backend's files into DIR
#                                    (the Dockerfile's build stage runs this)
# Env:
#   VERSION     stamped into the binary, label and tag     default: appVersion of charts/runlet
#   COMMIT      stamped into the binary and label          default: git HEAD (+ -dirty)
#   IMAGE       the image to build                         default: localhost/runlet:$VERSION
#   BASE_IMAGE  the base; set it to use a registry's       default: localhost/runlet/base:latest (built here)
#   RUNLET_REBUILD_IMAGES=1  rebuild the local base too
# Prints the image name last on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# helper_rootfs DIR: the programs runlet runs inside the runlet container, copied from this system into
# DIR at the same paths, so that a host with no CNI plugins of its own still works and the chart's runc
# mode needs nothing of the host but its kernel: the CNI plugins bridge, host-local and portmap
# (Debian's containernetworking-plugins, in /usr/lib/cni, last in runlet's --cni-bin-dir), iptables
# (kubenet's masquerade rule and portmap's hostPort rules; both backends, `iptables` being this system's
# choice, nft or legacy) with its extensions, runc and conmon (the runc backend's), and the shared
# libraries all of them load (Debian builds them against glibc).
helper_rootfs() {
  local dst=$1 f p s xt mode
  local -a elves=() libs=()
  mkdir -p "$dst/usr/lib/cni" "$dst/usr/sbin" "$dst/usr/bin" "$dst/etc"
  for p in runc:/usr/sbin conmon:/usr/bin; do
    f=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin:/usr/libexec/podman command -v "${p%%:*}" || true)
    [ -n "$f" ] || die "${p%%:*} is missing (apt-get install runc conmon)"
    cp "$f" "$dst${p#*:}/${p%%:*}"; elves+=("$f")
  done
  for p in bridge host-local portmap; do
    [ -x "/usr/lib/cni/$p" ] || die "/usr/lib/cni/$p is missing (apt-get install containernetworking-plugins)"
    cp "/usr/lib/cni/$p" "$dst/usr/lib/cni/$p"; elves+=("/usr/lib/cni/$p")
  done
  f=$(readlink -f /usr/sbin/iptables 2>/dev/null || true)
  case "${f##*/}" in
    xtables-nft-multi) mode=nft ;;
    xtables-legacy-multi) mode=legacy ;;
    *) die "/usr/sbin/iptables is not iptables' nft or legacy multi-call binary (apt-get install iptables)" ;;
  esac
  for p in nft legacy; do
    [ -x "/usr/sbin/xtables-$p-multi" ] || continue
    cp "/usr/sbin/xtables-$p-multi" "$dst/usr/sbin/"; elves+=("/usr/sbin/xtables-$p-multi")
    for f in iptables ip6tables; do
      for s in "" -save -restore; do ln -sf "xtables-$p-multi" "$dst/usr/sbin/$f-$p$s"; done
    done
  done
  for f in iptables ip6tables; do
    for s in "" -save -restore; do ln -sf "$f-$mode$s" "$dst/usr/sbin/$f$s"; done
  done
  # the extensions (-j MASQUERADE, -m addrtype, ...) are loaded from the directory built into libxtables
  xt=
  for f in /usr/lib/*/xtables/libxt_standard.so /usr/lib*/xtables/libxt_standard.so; do
    [ -f "$f" ] && { xt=${f%/*}; break; }
  done
  [ -n "$xt" ] || die "iptables' extensions (libxt_standard.so) not found"
  mkdir -p "$dst$xt"; cp -a "$xt/." "$dst$xt/"; elves+=("$xt"/*.so)
  [ -f /etc/protocols ] && cp /etc/protocols "$dst/etc/protocols" # iptables -p by name
  # shared libraries, at the paths the loader resolved them to here (its own included)
  mapfile -t libs < <(for f in "${elves[@]}"; do ldd "$f" 2>/dev/null || true; done |
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
  for f in "${libs[@]}"; do
    mkdir -p "$dst$(dirname "$f")"; cp -L "$f" "$dst$f"
  done
  log "pod network and runc files ($mode iptables, ${#libs[@]} libraries) copied into $dst"
}
if [ "${1:-}" = --rootfs ]; then
  [ -n "${2:-}" ] || die "usage: $0 --rootfs DIR"
  helper_rootfs "$2"
  exit 0
fi

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
helper_rootfs "$CTX/context/rootfs"
(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" \
  -o "$CTX/context/" ./cmd/runlet ./cmd/runlet-pause)
podman build --quiet -f "$REPO_ROOT/Dockerfile" \
  --build-arg BINARY=prebuilt --build-arg BASE_IMAGE="$BASE_IMAGE" \
  --build-arg VERSION="$VERSION" --build-arg COMMIT="$COMMIT" \
  --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  -t "$IMAGE" "$CTX/context" >/dev/null
log "built $IMAGE"
echo "$IMAGE"
