#!/bin/bash
# Build the local control plane + tools from the Go module proxy, pinned by hack/cp-modules/*/go.{mod,sum}:
#   kube-apiserver kube-scheduler kube-controller-manager kube-proxy kubectl (k8s.io/kubernetes v1.37.2),
#   etcd etcdctl (go.etcd.io/etcd v3.7.3), helm (helm.sh/helm/v3 v3.22.0)
# into $CP_BIN_DIR (default ~/.cache/runlet/cp-v1.37.2/bin), outside the clone. Skips when all exist.
# Takes ~6 min cold on 2 cores. Progress goes to stderr; the bin dir is printed on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HV=v3.22.0

have_all() { for b in $CP_BINARIES; do [ -x "$CP_BIN_DIR/$b" ] || return 1; done; }
if have_all; then echo "$CP_BIN_DIR"; exit 0; fi

mkdir -p "$CP_CACHE"
# One build at a time per cache dir (make run and make test may race).
exec 9>"$CP_CACHE/.build.lock"
if ! flock -n 9; then log "another control-plane build is running; waiting for it"; flock 9; fi
if have_all; then echo "$CP_BIN_DIR"; exit 0; fi

log "building the control plane ($CP_K8S_VERSION) into $CP_BIN_DIR (~6 min cold)"
export CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local
MODDIR=$CP_CACHE/cp-modules
rm -rf "$MODDIR"; mkdir -p "$MODDIR"
cp -r "$HACK_DIR/cp-modules/k8s" "$HACK_DIR/cp-modules/etcd" "$MODDIR/"
for m in k8s etcd; do ( cd "$MODDIR/$m" && go mod download ); done
log "modules downloaded"

TMP=$CP_CACHE/bin.tmp
rm -rf "$TMP"; mkdir -p "$TMP"
LD=$(k8s_ldflags)
( cd "$MODDIR/k8s" && go build -trimpath -ldflags="$LD" -o "$TMP/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-proxy \
    k8s.io/kubernetes/cmd/kubectl )
log "kubernetes binaries built"
( cd "$MODDIR/etcd" && go build -trimpath -ldflags='-s -w' -o "$TMP/etcd" go.etcd.io/etcd/server/v3 \
  && go build -trimpath -ldflags='-s -w' -o "$TMP/etcdctl" go.etcd.io/etcd/etcdctl/v3 )
log "etcd built"
# helm's go.mod has no replace directives: a plain versioned go install works
( cd / && GOFLAGS=-buildvcs=false GOBIN="$TMP" go install -trimpath \
    -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HV" "helm.sh/helm/v3/cmd/helm@$HV" )
log "helm built"

mkdir -p "$CP_BIN_DIR"
for b in $CP_BINARIES; do mv -f "$TMP/$b" "$CP_BIN_DIR/$b"; done
rm -rf "$TMP"
log "control plane binaries ready in $CP_BIN_DIR"
echo "$CP_BIN_DIR"
