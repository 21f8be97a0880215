#!/bin/bash
# Build CoreDNS for the local cluster DNS add-on (hack/cluster-dns.sh) from the Go module proxy and import
# it into podman, so that nothing needs a registry:
#   binary  $RUNLET_CACHE/coredns-<version>/coredns   (CGO_ENABLED=0, static; outside the clone)
#   image   localhost/runlet/coredns:<version>          (/coredns on an empty rootfs, ENTRYPOINT /coredns)
# The version and the plugin set are pinned by hack/cp-modules/coredns/{go.mod,go.sum,main.go}: a separate
# module from runlet's and the control plane's, so CoreDNS's own requirements (client-go etc.) win inside it.
# Both steps are skipped when their result exists and was made from the same module files
# (RUNLET_REBUILD_IMAGES=1 forces the image). Progress on stderr; the image name is printed on stdout.
# Takes ~2 min on 2 cores, ~5.5 min with empty Go module and build caches; a 55 MB static binary.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=$HACK_DIR/cp-modules/coredns
VERSION=$(coredns_version)
[ -n "$VERSION" ] || die "no github.com/coredns/coredns require line in $SRC/go.mod"
OUT=$RUNLET_CACHE/coredns-$VERSION
BIN=$OUT/coredns
IMAGE=$(coredns_image)
# a change of the plugin set (main.go) or of the pins rebuilds binary and image
HASH=$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-16)

have_bin() { [ -x "$BIN" ] && [ "$(cat "$OUT/.source" 2>/dev/null)" = "$HASH" ]; }
if ! have_bin; then
  mkdir -p "$OUT"
  # one build at a time per cache dir (make run and make test may race)
  exec 9>"$OUT/.build.lock"
  if ! flock -n 9; then log "another CoreDNS build is running; waiting for it"; flock 9; fi
  if ! have_bin; then
    t=$(date +%s)
    log "building CoreDNS $VERSION into $OUT (2-6 min cold)"
    export CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local
    MODDIR=$OUT/module
    rm -rf "$MODDIR"; mkdir -p "$MODDIR"
    cp "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" "$MODDIR/"
    ( cd "$MODDIR" && go mod download )
    log "CoreDNS modules downloaded"
    ( cd "$MODDIR" && go build -trimpath -o "$BIN.tmp" \
        -ldflags="-s -w -X github.com/coredns/coredns/coremain.GitCommit=$VERSION-runlet" . )
    mv -f "$BIN.tmp" "$BIN"
    echo "$HASH" >"$OUT/.source"
    log "CoreDNS $VERSION built in $(( $(date +%s) - t ))s: $BIN"
  fi
  exec 9>&-
fi

if [ "${RUNLET_REBUILD_IMAGES:-0}" != 1 ] &&
  [ "$(podman image inspect --format '{{index .Labels "io.runlet.source"}}' "$IMAGE" 2>/dev/null)" = "$HASH" ]; then
  echo "$IMAGE"; exit 0
fi
ROOT=$(mktemp -d); trap 'rm -rf "$ROOT" "$ROOT.tar"' EXIT
# /etc for the resolv.conf and hosts the runtime mounts, /tmp for client-go's caches
mkdir -p "$ROOT"/{etc,tmp,proc,sys,dev}
chmod 1777 "$ROOT/tmp"
cp "$BIN" "$ROOT/coredns"
tar -C "$ROOT" -cf "$ROOT.tar" .
podman import -q --change 'ENTRYPOINT ["/coredns"]' \
  --change "LABEL io.runlet.source=$HASH" "$ROOT.tar" "$IMAGE" >/dev/null
log "imported $IMAGE"
echo "$IMAGE"
