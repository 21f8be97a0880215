#!/bin/bash
# Build localhost/runlet/testserver:latest: runlet's probe and hook test workload
# (test/images/testserver: HTTP, HTTPS and gRPC health in one static binary) on
# busybox-static, so exec probes have a shell. Rebuilt when its sources change.
# Usage: hack/images-testserver.sh   (RUNLET_REBUILD_IMAGES=1 forces a rebuild)
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=localhost/runlet/testserver:latest
HASH=$(cat "$0" test/images/testserver/*.go go.sum | sha256sum | cut -c1-16)
if [ "${RUNLET_REBUILD_IMAGES:-0}" != 1 ] &&
  [ "$(podman image inspect --format '{{index .Labels "io.runlet.source"}}' "$IMAGE" 2>/dev/null)" = "$HASH" ]; then
  exit 0
fi
BB=$(command -v busybox || true)
[ -n "$BB" ] && file -L "$BB" 2>/dev/null | grep -q 'statically linked' || BB=/bin/busybox
[ -x "$BB" ] || { echo "busybox-static is not installed (apt-get install busybox-static)" >&2; exit 1; }
ROOT=$(mktemp -d); trap 'rm -rf "$ROOT" "$ROOT.tar"' EXIT
mkdir -p "$ROOT"/{bin,etc,tmp,proc,sys,dev,root}
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$ROOT/testserver" ./test/images/testserver
cp "$BB" "$ROOT/bin/busybox"
for a in $("$BB" --list); do [ "$a" = busybox ] || ln -sf busybox "$ROOT/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOT/etc/passwd"
echo 'root:x:0:' >"$ROOT/etc/group"
chmod 1777 "$ROOT/tmp"
tar -C "$ROOT" -cf "$ROOT.tar" .
podman import --change 'ENTRYPOINT ["/testserver"]' --change 'ENV PATH=/bin' \
  --change "LABEL io.runlet.source=$HASH" "$ROOT.tar" "$IMAGE" >/dev/null
echo "built $IMAGE"
