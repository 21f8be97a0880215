#!/bin/bash
# Build the container registry the image-pull e2e tests start on 127.0.0.1
# (github.com/distribution/distribution/v3 cmd/registry, pinned) from the Go module proxy into
# $REGISTRY_BIN (default ~/.cache/runlet/registry-<version>/bin/registry), outside the clone and
# outside runlet's module. Skips when it exists. The binary's path is printed on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RV=${REGISTRY_VERSION:-v3.1.2}
REGISTRY_BIN=${REGISTRY_BIN:-$RUNLET_CACHE/registry-$RV/bin/registry}
if [ -x "$REGISTRY_BIN" ]; then echo "$REGISTRY_BIN"; exit 0; fi

dir=$(dirname "$REGISTRY_BIN")
mkdir -p "$dir"
exec 9>"$dir/.build.lock"
if ! flock -n 9; then log "another registry build is running; waiting for it"; flock 9; fi
if [ -x "$REGISTRY_BIN" ]; then echo "$REGISTRY_BIN"; exit 0; fi

log "building the registry (distribution $RV)"
# distribution's go.mod has no replace directives: a plain versioned go install works
( cd / && CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOBIN="$dir" go install -trimpath -ldflags='-s -w' \
    "github.com/distribution/distribution/v3/cmd/registry@$RV" )
[ -x "$REGISTRY_BIN" ] || die "go install did not produce $REGISTRY_BIN"
log "registry built"
echo "$REGISTRY_BIN"
