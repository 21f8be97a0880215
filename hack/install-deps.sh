#!/bin/bash
# Install the Debian packages runlet's build, `make run`, `make lint`, the tests and `make bench` need
# (Debian 12 / Ubuntu, as root). gcc and libc6-dev build containerd (cgo) and the static pause image.
# Idempotent: asks apt only when something is missing. Go itself is expected at /usr/local/go (1.26+).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(
  podman runc crun conmon catatonit containernetworking-plugins netavark aardvark-dns
  golang-github-containers-common uidmap slirp4netns fuse-overlayfs iptables
  busybox-static file openssl curl bc iproute2 procps util-linux ca-certificates git make shellcheck
  dbus-daemon gcc libc6-dev
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run as root or: sudo apt-get install ${missing[*]}"
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  log "packages installed"
else
  log "system packages present"
fi

command -v go >/dev/null 2>&1 || die "Go is not installed (expected /usr/local/go/bin/go, Go 1.26+)"
log "$(go version)"
