#!/bin/bash
# Build the local test images from busybox-static: no registry is needed.
#   localhost/runlet/busybox:latest   busybox with its applets linked in /bin
#   localhost/runlet/testserver:latest  HTTP/HTTPS/gRPC health test server (hack/images-testserver.sh)
# Usage: hack/images.sh            (idempotent; RUNLET_REBUILD_IMAGES=1 forces a rebuild)
set -euo pipefail
bash "$(dirname "$0")/images-testserver.sh" # probe and hook test workload
IMAGE=localhost/runlet/busybox:latest
if [ "${RUNLET_REBUILD_IMAGES:-0}" != 1 ] && podman image exists "$IMAGE" 2>/dev/null; then
  exit 0
fi
BB=$(command -v busybox || true)
[ -n "$BB" ] && file -L "$BB" 2>/dev/null | grep -q 'statically linked' || BB=/bin/busybox
[ -x "$BB" ] || { echo "busybox-static is not installed (apt-get install busybox-static)" >&2; exit 1; }
ROOT=$(mktemp -d); trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT"/{bin,etc,tmp,proc,sys,dev,root,var/www}
cp "$BB" "$ROOT/bin/busybox"
for a in $("$BB" --list); do [ "$a" = busybox ] || ln -sf busybox "$ROOT/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOT/etc/passwd"
echo 'root:x:0:' >"$ROOT/etc/group"
chmod 1777 "$ROOT/tmp"
tar -C "$ROOT" -cf "$ROOT.tar" .
podman import --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin' "$ROOT.tar" "$IMAGE" >/dev/null
rm -f "$ROOT.tar"
echo "built $IMAGE"
