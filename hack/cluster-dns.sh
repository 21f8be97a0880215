#!/bin/bash
# The local cluster's DNS add-on: CoreDNS as kube-system/kube-dns (hack/cluster-dns.yaml), against the
# control plane in CP_DIR (its admin kubeconfig).
# Usage: hack/cluster-dns.sh up|wait|down|render
#   up      import the image into podman if missing (hack/coredns-build.sh, cached) and apply the manifest;
#           DRY_RUN=server only validates it against the apiserver (nothing is built or changed)
#   wait    until the Deployment is available (TIMEOUT, default 120s): it needs a Ready runlet node on the
#           pod network, and kube-proxy (hack/kube-proxy.sh) for the kubernetes Service it watches through
#   down    delete it
#   render  print the manifest as applied
# Env: CP_DIR (default <repo>/.run/cp), CLUSTER_DNS_IP (10.0.0.10: runlet's --cluster-dns),
#      CLUSTER_DOMAIN (cluster.local: runlet's --cluster-domain), DNS_NODE (CoreDNS on that node, by its
#      kubernetes.io/hostname label, instead of on the runlet nodes: a conformance run against the kubelet)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CP_DIR=${CP_DIR:-$REPO_ROOT/.run/cp}
CLUSTER_DNS_IP=${CLUSTER_DNS_IP:-10.0.0.10}
CLUSTER_DOMAIN=${CLUSTER_DOMAIN:-cluster.local}
IMAGE=$(coredns_image)
K=("$CP_BIN_DIR/kubectl" --kubeconfig "$CP_DIR/pki/admin.kubeconfig")

render() {
  local selector="type: virtual-kubelet"
  [ -z "${DNS_NODE:-}" ] || selector="kubernetes.io/hostname: $DNS_NODE"
  sed -e "s|@COREDNS_IMAGE@|$IMAGE|g" -e "s|@CLUSTER_DNS_IP@|$CLUSTER_DNS_IP|g" \
    -e "s|@CLUSTER_DOMAIN@|$CLUSTER_DOMAIN|g" -e "s|@NODE_SELECTOR@|$selector|g" "$HACK_DIR/cluster-dns.yaml"
}

case "${1:-}" in
up)
  [ -f "$CP_DIR/pki/admin.kubeconfig" ] || die "no control plane in $CP_DIR (run hack/cp-up.sh)"
  if [ -n "${DRY_RUN:-}" ]; then
    render | "${K[@]}" apply --dry-run="$DRY_RUN" -f - >&2
    exit 0
  fi
  bash "$HACK_DIR/coredns-build.sh" >/dev/null
  render | "${K[@]}" apply -f - >/dev/null
  log "cluster DNS applied: kube-system/kube-dns $CLUSTER_DNS_IP ($CLUSTER_DOMAIN), image $IMAGE"
  ;;
wait)
  if ! "${K[@]}" -n kube-system rollout status deployment/coredns --timeout="${TIMEOUT:-120s}" >/dev/null; then
    "${K[@]}" -n kube-system get pods -l k8s-app=kube-dns -o wide >&2 || true
    die "CoreDNS is not available (a runlet node on the pod network and kube-proxy are needed)"
  fi
  log "CoreDNS is available at $CLUSTER_DNS_IP"
  ;;
down)
  render | "${K[@]}" delete --ignore-not-found -f - >/dev/null
  log "cluster DNS deleted"
  ;;
render) render ;;
*) die "usage: $0 up|wait|down|render" ;;
esac
