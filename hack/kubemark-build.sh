#!/bin/bash
# Build kubemark (k8s.io/kubernetes/cmd/kubemark, the hollow node: --morph=kubelet is the kubelet's whole
# core on a fake CRI) from the Go module proxy, for `make scale` (test/scale), as hack/cp-build.sh builds
# the control plane: same version, same version stamps, pinned by hack/cp-modules/kubemark/go.{mod,sum}.
# A module of its own: the kubelet's packages need modules the control plane's binaries do not.
#   binary  $RUNLET_CACHE/kubemark-<version>/kubemark   (outside the clone; skipped when it exists and was
#           built from the same module files)
# Takes ~5 min cold on 2 cores. Progress goes to stderr; the binary's path is printed on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=$HACK_DIR/cp-modules/kubemark
OUT=$RUNLET_CACHE/kubemark-$CP_K8S_VERSION
BIN=$OUT/kubemark
HASH=$(cat "$SRC/go.mod" "$SRC/go.sum" | sha256sum | cut -c1-16)

have_bin() { [ -x "$BIN" ] && [ "$(cat "$OUT/.source" 2>/dev/null)" = "$HASH" ]; }
if have_bin; then echo "$BIN"; exit 0; fi
mkdir -p "$OUT"
# one build at a time per cache dir
exec 9>"$OUT/.build.lock"
if ! flock -n 9; then log "another kubemark build is running; waiting for it"; flock 9; fi
if have_bin; then echo "$BIN"; exit 0; fi

log "building kubemark $CP_K8S_VERSION into $OUT (~5 min cold)"
export CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local
MODDIR=$OUT/module
rm -rf "$MODDIR"; mkdir -p "$MODDIR"
cp "$SRC/go.mod" "$SRC/go.sum" "$MODDIR/"
( cd "$MODDIR" && go mod download )
log "kubemark modules downloaded"
LD=$(k8s_ldflags)
( cd "$MODDIR" && go build -trimpath -ldflags="$LD" -o "$BIN.tmp" k8s.io/kubernetes/cmd/kubemark )
mv -f "$BIN.tmp" "$BIN"
echo "$HASH" >"$OUT/.source"
log "kubemark ready: $BIN"
echo "$BIN"
