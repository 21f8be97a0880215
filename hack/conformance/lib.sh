# Shared settings for hack/conformance/*.sh. Source it: . "$(dirname "$0")/lib.sh"
# The upstream e2e suite is built from the same k8s.io/kubernetes version as the control plane, into a
# cache outside the clone (like the control plane's): ~/.cache/runlet/conformance-v1.37.2/
#   bin/      e2e.test, ginkgo, agnhost
#   mod/      the wrapper module (a copy of hack/conformance/mod)
#   images/   rootfs work dirs of the test images
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/lib.sh"
CONF_HACK_DIR=$HACK_DIR/conformance
CONF_CACHE=${CONF_CACHE:-$RUNLET_CACHE/conformance-$CP_K8S_VERSION}
CONF_BIN_DIR=$CONF_CACHE/bin

# conf_go ARGS...: go with the control plane's settings for the upstream builds (static, no VCS
# stamping, local toolchain, go.sum as committed); runlet itself is built as `make build` does.
conf_go() { GOFLAGS="-buildvcs=false -mod=readonly" GOTOOLCHAIN=local CGO_ENABLED=0 go "$@"; }

# with_lock NAME CMD... : run CMD holding $CONF_CACHE/.NAME.lock (one build per cache dir at a time)
with_lock() {
  local name=$1; shift
  mkdir -p "$CONF_CACHE"
  (
    exec 9>"$CONF_CACHE/.$name.lock"
    if ! flock -n 9; then log "another $name build is running; waiting for it"; flock 9; fi
    "$@"
  )
}

# conf_module: the wrapper module, copied into the cache when it changed
conf_module() {
  local m=$CONF_CACHE/mod
  if ! cmp -s "$CONF_HACK_DIR/mod/go.sum" "$m/go.sum" 2>/dev/null || ! cmp -s "$CONF_HACK_DIR/mod/go.mod" "$m/go.mod"; then
    rm -rf "$m"; mkdir -p "$m"; cp "$CONF_HACK_DIR"/mod/* "$m/"
  fi
  echo "$m"
}
