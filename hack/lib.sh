# Shared settings for the hack/ scripts. Source it: . "$(dirname "$0")/lib.sh"
# Everything can be overridden from the environment.
HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HACK_DIR/.." && pwd)

# Control-plane versions (must match hack/cp-modules/*/go.mod) and the cache they are built into,
# outside the clone so that fresh clones (CI) reuse it.
CP_K8S_VERSION=v1.37.2
RUNLET_CACHE=${RUNLET_CACHE:-$HOME/.cache/runlet}
CP_CACHE=${CP_CACHE:-$RUNLET_CACHE/cp-$CP_K8S_VERSION}
CP_BIN_DIR=${CP_BIN_DIR:-$CP_CACHE/bin}
CP_BINARIES="etcd etcdctl kube-apiserver kube-scheduler kube-controller-manager kube-proxy kubectl helm"
# CoreDNS for the cluster DNS add-on (hack/coredns-build.sh, hack/cluster-dns.sh): the release that
# hack/cp-modules/coredns/go.mod pins, and the local image it is imported as
coredns_version() { awk '$1 == "require" && $2 == "github.com/coredns/coredns" {print $3}' "$HACK_DIR/cp-modules/coredns/go.mod"; }
coredns_image() { echo "localhost/runlet/coredns:$(coredns_version)"; }

# Go 1.26 lives in /usr/local/go; put it first so that an older distro go does not win
if [ -x /usr/local/go/bin/go ] && [[ ":$PATH:" != *:/usr/local/go/bin:* ]]; then export PATH=/usr/local/go/bin:$PATH; fi

export T0=${T0:-$(date +%s)}
# log MSG... : progress line for humans, on stderr
log() { echo "[$(( $(date +%s) - T0 ))s] $*" >&2; }
die() { echo "error: $*" >&2; exit 1; }

# stop_pid NAME PIDFILE [GRACE_SECONDS]: SIGTERM the recorded PID, SIGKILL after the grace period.
stop_pid() {
  local name=$1 f=$2 grace=${3:-10} p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill "$p" 2>/dev/null || true
    for _ in $(seq $((grace * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then log "$name (pid $p) ignored SIGTERM for ${grace}s: SIGKILL"; kill -9 "$p" 2>/dev/null || true; fi
    log "stopped $name (pid $p)"
  fi
  rm -f "$f"
}
