# Shared settings for hack/conformance/*.sh. Source it: . "$(dirname "$0")/lib.sh"
# The upstream e2e suite is built from the same k8s.io/kubernetes version as the control plane, into a
# cache outside the clone (like the control plane's): ~/.cache/runlet/conformance-v1.37.2/
#   bin/      e2e.test, ginkgo, agnhost
#   mod/      the wrapper module (a copy of hack/conformance/mod)
#   images/   rootfs work dirs of the test images
# shellcheck shell=bash
# shellcheck source=../lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/lib.sh"
CONF_HACK_DIR=$HACK_DIR/conformance
CONF_CACHE=${CONF_CACHE:-$RUNLET_CACHE/conformance-$CP_K8S_VERSION}
# shellcheck disable=SC2034 # used by the scripts that source this file
CONF_BIN_DIR=$CONF_CACHE/bin

# conf_go ARGS...: go with the control plane's settings for the upstream builds (static, no VCS
# stamping, local toolchain, go.sum as committed); runlet itself is built as `make build` does.
conf_go() { GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local CGO_ENABLED=0 go "$@"; }

# with_lock NAME CMD... : run CMD holding $CONF_CACHE/.NAME.lock (one build per cache dir at a time)
with_lock() {
  local name=$1; shift
  locked "$CONF_CACHE/.$name.lock" "$@"
}

# conf_module: the wrapper module, copied into the cache when it changed
conf_module() {
  local m=$CONF_CACHE/mod
  if ! cmp -s "$CONF_HACK_DIR/mod/go.sum" "$m/go.sum" 2>/dev/null || ! cmp -s "$CONF_HACK_DIR/mod/go.mod" "$m/go.mod"; then
    rm -rf "$m"; mkdir -p "$m"; cp "$CONF_HACK_DIR"/mod/* "$m/"
  fi
  echo "$m"
}

# conf_set: the settings of the spec set SET (default nodeconformance), for run.sh, e2e.sh and the summary:
#   nodeconformance  the default [NodeConformance] set (236 specs) against one runlet node
#   conformance      all 462 [Conformance] specs, [Serial], [Slow] and [Disruptive] ones included, against
#                    two runlet nodes, with kube-proxy and CoreDNS
#   pod-api          the 163 specs of both sets that cover the pod API of 1.34-1.37 (lists/pod-api.txt),
#                    Beta ones of gates on by default included, on the cluster of SET=conformance
# Sets SET_LIST (its specs, one per line), SET_APART (its specs that say nothing about the node: they
# pass with no kubelet behind it; counted apart in the summary), SET_NODES (runlet nodes), SET_SKIP (the
# default SKIP), SET_LABELS (a ginkgo label filter, also for FOCUS runs) and SET_TIMEOUT (the default
# whole-suite TIMEOUT).
conf_set() {
  SET=${SET:-nodeconformance}
  # shellcheck disable=SC2034 # SET_* are read by the scripts that source this file
  case $SET in
    nodeconformance)
      SET_LIST=$CONF_HACK_DIR/lists/nodeconformance-default.txt SET_APART=$CONF_HACK_DIR/lists/vacuous.txt
      SET_NODES=1 SET_LABELS='' SET_TIMEOUT=3h
      SET_SKIP='\[Serial\]|\[Slow\]|\[Disruptive\]|\[Flaky\]|\[Alpha\]|\[Beta\]|\[Feature:[^]]+\]' ;;
    conformance)
      # what CNCF certification runs: every [Conformance] spec, serial ones too (ginkgo runs the specs
      # the framework marks Serial alone, after the parallel ones)
      SET_LIST=$CONF_HACK_DIR/lists/conformance.txt SET_APART=$CONF_HACK_DIR/lists/conformance-api-only.txt
      SET_NODES=2 SET_LABELS=Conformance SET_TIMEOUT=6h SET_SKIP='' ;;
    pod-api)
      SET_LIST=$CONF_HACK_DIR/lists/pod-api.txt SET_APART=$CONF_HACK_DIR/lists/conformance-api-only.txt
      SET_NODES=2 SET_LABELS='' SET_TIMEOUT=3h SET_SKIP='' ;;
    *) die "SET must be nodeconformance, conformance or pod-api, not '$SET'" ;;
  esac
}
