# Shared settings for the hack/ scripts. Source it: . "$(dirname "$0")/lib.sh"
# Everything can be overridden from the environment.
# shellcheck shell=bash
HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this file
REPO_ROOT=$(cd "$HACK_DIR/.." && pwd)

# Control-plane versions (must match hack/cp-modules/*/go.mod) and the cache they are built into,
# outside the clone so that fresh clones (CI) reuse it.
CP_K8S_VERSION=v1.37.2
RUNLET_CACHE=${RUNLET_CACHE:-$HOME/.cache/runlet}
CP_CACHE=${CP_CACHE:-$RUNLET_CACHE/cp-$CP_K8S_VERSION}
CP_BIN_DIR=${CP_BIN_DIR:-$CP_CACHE/bin}
# shellcheck disable=SC2034 # used by the scripts that source this file
CP_BINARIES="etcd etcdctl kube-apiserver kube-scheduler kube-controller-manager kube-proxy kubectl helm"
# k8s_ldflags: the -ldflags of a Kubernetes binary built here: stripped, and stamped with CP_K8S_VERSION as
# a release build stamps it (hack/cp-build.sh, hack/kubemark-build.sh)
k8s_ldflags() {
  local ld="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$CP_K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=37 -X $pkg.gitTreeState=clean"
    ld="$ld -X $pkg.gitCommit=0000000000000000000000000000000000000000 -X $pkg.buildDate=2026-01-01T00:00:00Z"
  done
  echo "$ld"
}
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

# remove_node_network NODE ROOT_DIR: what a stopped runlet's kubenet network leaves on the host: the
# network namespaces of its pods (pinned in /run/netns, recorded in ROOT_DIR/network/attachments/*.json),
# its bridge runlet-<first 8 hex of sha256(NODE)>, its NAT POSTROUTING MASQUERADE rule, and the hostPort
# rules of pods it did not tear down (a hostPort left mapped takes the port's traffic from 127.0.0.1). A real node
# keeps them for its next start; a node that does not come back (a conformance node, make stop with
# RM_PODS=1, a test's node: test/e2e/framework) must not leave them.
remove_node_network() {
  local node=$1 root=$2 f ns br n=0 line chain
  for f in "$root"/network/attachments/*.json; do
    [ -f "$f" ] || continue
    # runlet writes the record as compact JSON, "netns" before the pod's fields
    ns=$(sed -n 's/^[^}]*"netns":"\([^"]*\)".*/\1/p' "$f")
    case $ns in /run/netns/*/* | *..*) continue ;; /run/netns/?*) ;; *) continue ;; esac
    [ -e "$ns" ] || continue
    for _ in 1 2 3; do mountpoint -q "$ns" 2>/dev/null || break; umount -l "$ns" 2>/dev/null || break; done
    rm -f "$ns"
    n=$((n + 1))
  done
  [ "$n" = 0 ] || log "removed $n pod network namespaces of node $node"
  br=runlet-$(printf '%s' "$node" | sha256sum | cut -c1-8)
  if [ -e "/sys/class/net/$br" ]; then
    if ip link delete "$br" 2>/dev/null; then log "removed bridge $br of node $node"; else log "warning: could not remove bridge $br"; fi
  fi
  # the rule as iptables-save prints it, its quoted comment kept whole by xargs
  iptables-save -t nat 2>/dev/null | grep '^-A POSTROUTING ' |
    grep -F -- "\"runlet $node: masquerade pod traffic leaving the cluster\"" | while read -r line; do
      if printf '%s\n' "${line#-A }" | xargs iptables -w 5 -t nat -D; then
        log "removed the masquerade rule of node $node"
      else
        log "warning: could not remove the iptables rule: $line"
      fi
    done || true
  # the hostPort rules of pods it did not tear down: portmap's, which name the network (the bridge's name);
  # iptables-restore reads the rule as iptables-save quotes it
  iptables-save -t nat 2>/dev/null | grep '^-A CNI-HOSTPORT-DNAT ' | grep -F -- "dnat name: \\\"$br\\\"" |
    while read -r line; do
      chain=${line##* -j }
      if printf '*nat\n-D %s\n-F %s\n-X %s\nCOMMIT\n' "${line#-A }" "$chain" "$chain" | iptables-restore -w 5 --noflush; then
        log "removed the hostPort rules $chain of node $node"
      else
        log "warning: could not remove the hostPort rules $chain"
      fi
    done || true
}

# remove_pod_cgroups NODE ROOT_DIR: the cgroups a stopped runlet's pods left (/runlet/pod<uid> in every
# hierarchy, with what the runtime made below), once the pods are gone: those of the pods with a directory
# under ROOT_DIR/pods, which runlet makes before a pod's first sandbox, so no other node's. A cgroup a
# process still holds stays.
remove_pod_cgroups() {
  local node=$1 root=$2 d cg c n=0
  for d in "$root"/pods/*/; do
    [ -d "$d" ] || continue
    cg=$(basename "$d"); cg=pod${cg//-/_}
    for c in /sys/fs/cgroup/*/runlet/"$cg" /sys/fs/cgroup/runlet/"$cg"; do
      [ -d "$c" ] || continue
      find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [ -d "$c" ] || n=$((n + 1))
    done
  done
  [ "$n" = 0 ] || log "removed $n pod cgroups (one per pod and hierarchy) of node $node"
}

# remove_runc_pods NODE ROOT: what a stopped runlet on the runc backend (--root-dir ROOT) left running:
# its containers (runc delete --force), its pods' pause processes, and the mounts under ROOT (container
# roots, /dev/shm, volumes), innermost first. runlet itself leaves them running across its restarts.
remove_runc_pods() {
  local node=$1 root=$2 state=$2/runc/state id f pid n=0
  [ -d "$root/runc" ] || return 0
  for id in "$state"/*; do
    [ -e "$id" ] || continue
    runc --root "$state" delete --force "${id##*/}" >/dev/null 2>&1 && n=$((n + 1))
  done
  for f in "$root"/runc/s/*/sandbox.json; do
    [ -f "$f" ] || continue
    pid=$(sed -n 's/.*"pause":{"pid":\([0-9]*\).*/\1/p' "$f")
    # only a pause process: the PID may have been reused since
    if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '^runlet-pause'; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  awk -v p="$root/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" || true; done
  [ "$n" = 0 ] || log "removed $n runc containers of node $node"
}
