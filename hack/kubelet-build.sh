#!/bin/bash
# Build the real node agent `make bench` measures runlet against, from the Go module proxy:
#   kubelet                                    k8s.io/kubernetes v1.37.2, from hack/cp-modules/k8s (the control
#                                              plane's module), into $KUBELET_BIN_DIR
#   containerd, ctr, containerd-shim-runc-v2   github.com/containerd/containerd/v2 v2.4.2, into $CONTAINERD_BIN_DIR
# (defaults ~/.cache/runlet/kubelet-v1.37.2/bin and ~/.cache/runlet/containerd-v2.4.2/bin, outside the clone).
# Each part is skipped when its binaries exist. Both take about 2 min on 2 cores once the control plane's
# build (make cp) has warmed Go's build cache, about 20 min cold.
# Progress goes to stderr; the two bin dirs are printed on stdout, the kubelet's first.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local

have() { local d=$1 b; shift; for b in "$@"; do [ -x "$d/$b" ] || return 1; done; }
build_kubelet() {
  have "$KUBELET_BIN_DIR" kubelet && return 0
  log "building the kubelet ($CP_K8S_VERSION) into $KUBELET_BIN_DIR"
  local mod=$KUBELET_BIN_DIR/../module
  rm -rf "$mod"; mkdir -p "$mod" "$KUBELET_BIN_DIR"
  cp "$HACK_DIR/cp-modules/k8s/go.mod" "$HACK_DIR/cp-modules/k8s/go.sum" "$mod/"
  ( cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags="$(k8s_ldflags)" -o "$KUBELET_BIN_DIR/kubelet.tmp" \
      k8s.io/kubernetes/cmd/kubelet )
  mv -f "$KUBELET_BIN_DIR/kubelet.tmp" "$KUBELET_BIN_DIR/kubelet"
  log "kubelet built"
}

# containerd/v2's go.mod has no replace directives, so a versioned go install works. containerd and ctr
# are built with cgo as upstream's release builds are, without the btrfs snapshotter (it needs libbtrfs's
# headers); the shim as upstream's Makefile builds it: static, without gRPC.
build_containerd() {
  have "$CONTAINERD_BIN_DIR" containerd ctr containerd-shim-runc-v2 && return 0
  log "building containerd ($CONTAINERD_VERSION) into $CONTAINERD_BIN_DIR"
  local p=github.com/containerd/containerd/v2 tmp=$CONTAINERD_BIN_DIR.tmp b ld
  ld="-s -w -X $p/version.Version=$CONTAINERD_VERSION -X $p/version.Revision=modproxy"
  ld="$ld -X $p/version.Package=github.com/containerd/containerd"
  rm -rf "$tmp"; mkdir -p "$tmp" "$CONTAINERD_BIN_DIR"
  ( cd / && GOFLAGS=-buildvcs=false CGO_ENABLED=1 GOBIN="$tmp" go install -trimpath -tags "urfave_cli_no_docs no_btrfs" \
      -ldflags "$ld" "$p/cmd/containerd@$CONTAINERD_VERSION" "$p/cmd/ctr@$CONTAINERD_VERSION" )
  ( cd / && GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath -tags "urfave_cli_no_docs no_grpc" \
      -ldflags "$ld" "$p/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" )
  for b in containerd ctr containerd-shim-runc-v2; do mv -f "$tmp/$b" "$CONTAINERD_BIN_DIR/$b"; done
  rm -rf "$tmp"
  log "containerd built"
}

locked "$KUBELET_BIN_DIR/../.build.lock" build_kubelet
locked "$CONTAINERD_BIN_DIR/../.build.lock" build_containerd
echo "$KUBELET_BIN_DIR"
echo "$CONTAINERD_BIN_DIR"
