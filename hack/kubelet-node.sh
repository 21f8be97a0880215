#!/bin/bash
# A real kubelet node on containerd, joined to a control plane of hack/cp-up.sh: what `make bench` measures
# runlet against, and a reference node for the upstream e2e specs. The kubelet (v1.37.2) and containerd
# (v2.4.2) come from hack/kubelet-build.sh; runc and the CNI plugins are the host's, as runlet's are.
#
# Usage: kubelet-node.sh up | down | images [IMAGE...]
#   up      containerd, then the kubelet, which bootstraps its identity system:node:<NODE_NAME> from the
#           control plane's bootstrap token (TLS bootstrap, as runlet does), registers the Node and waits
#           until it is Ready; the images (below) are imported first
#   down    the node's pods, the kubelet, containerd and its shims, by PID; then the mounts, cgroups, bridge,
#           CNI leases and the Node object; the host sysctls the kubelet set are put back when the last
#           kubelet node of the host stops
#   images  import images from podman's storage into the node's containerd (default: the pause image and
#           runlet's busybox and testserver test images; hack/images.sh builds those); the pause image is
#           built first when podman lacks it
# Env:
#   CP_DIR        the control plane's state dir (pki/, env)                  default <repo>/.run/cp
#   NODE_NAME     the Node's name                                             default kubelet
#   KUBELET_DIR   the node's state: containerd's root, the kubelet's root dir, logs, pids
#                                                                             default <CP_DIR>/../kubelet-<NODE_NAME>
#   PORT_BASE     the kubelet listens on +250 (healthz 127.0.0.1:+248), containerd's stream server on
#                 127.0.0.1:+10                                               default the control plane's
#   NODE_IP       the node's address (not loopback: the kubelet refuses it)   default the control plane's HOST_IP
#   MAX_PODS      the kubelet's maxPods                                       default 110
#   CLUSTER_DNS   the kubelet's clusterDNS (e.g. 10.0.0.10)                   default none
#   REGISTRY      a registry containerd may pull from over plain HTTP (host:port: a conformance run's
#                 stand-in for registry.k8s.io)                               default none
#   PORTMAP=0     no portmap plugin on the pod network (no hostPort; one plugin run less per pod start)
#   KUBELET_V     the kubelet's log verbosity                                 default 0
#   WATCH_PID     if set, a watchdog stops the node when that process exits (the bench sets it)
# Pods get addresses from the Node's spec.podCIDR on a bridge of their own, kubelet-<hash of the name>.
# The kubelet's kubepods cgroups live under /runlet-kubelet/<NODE_NAME> in every hierarchy.
# Files: KUBELET_DIR/logs/{containerd,kubelet}.log, KUBELET_DIR/pids/, KUBELET_DIR/env (for callers).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CMD=${1:-}; [ $# -gt 0 ] && shift
CP_DIR=${CP_DIR:-$REPO_ROOT/.run/cp}
[ -f "$CP_DIR/env" ] || die "no control plane in $CP_DIR (CP_DIR; hack/cp-up.sh writes $CP_DIR/env)"
cp_env() { sed -n "s/^export $1=//p" "$CP_DIR/env"; }
NODE_NAME=${NODE_NAME:-kubelet}
KUBELET_DIR=${KUBELET_DIR:-$(dirname "$CP_DIR")/kubelet-$NODE_NAME}
PORT_BASE=${PORT_BASE:-$(cp_env PORT_BASE)}
NODE_IP=${NODE_IP:-$(cp_env HOST_IP)}
PKI=$CP_DIR/pki
export KUBECONFIG=$PKI/admin.kubeconfig
PAUSE_IMAGE=registry.k8s.io/pause:3.10.2
KUBECTL=$CP_BIN_DIR/kubectl KUBELET=$KUBELET_BIN_DIR/kubelet CONTAINERD=$CONTAINERD_BIN_DIR/containerd
CTR=$CONTAINERD_BIN_DIR/ctr
# short names and paths derived from the node: its bridge (15 bytes at most) and its sockets' dir
hash=$(printf '%s' "$NODE_NAME" | sha256sum | cut -c1-8)
NET=kubelet-${hash:0:7}
RUN=/run/runlet-kubelet/$hash
SOCK=$RUN/containerd.sock
CGROUP_ROOT=/runlet-kubelet/$NODE_NAME
# host state shared by every kubelet node of this host: the first to start saves it, the last to stop
# puts it back
HOST_STATE=/run/runlet-kubelet/host
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
LOGS=$KUBELET_DIR/logs PIDS=$KUBELET_DIR/pids

alive() { [ -f "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }
ctr() { "$CTR" --address "$SOCK" --namespace k8s.io "$@"; }
# fill TEMPLATE OUT: the template of hack/kubelet-node/ with its @...@ fields filled
fill() {
  sed -e "s#@DIR@#$KUBELET_DIR#g" -e "s#@RUN@#$RUN#g" -e "s#@SOCK@#$SOCK#g" -e "s#@NET@#$NET#g" \
    -e "s#@PAUSE_IMAGE@#$PAUSE_IMAGE#g" -e "s#@RUNC@#$(command -v runc)#g" -e "s#@CNI_BIN_DIR@#$(cni_bin_dir)#g" \
    -e "s#@STREAM_PORT@#$((PORT_BASE + 10))#g" -e "s#@NODE_IP@#$NODE_IP#g" -e "s#@KUBELET_PORT@#$((PORT_BASE + 250))#g" \
    -e "s#@HEALTHZ_PORT@#$((PORT_BASE + 248))#g" -e "s#@CA@#$PKI/ca.crt#g" -e "s#@CGROUP_ROOT@#$CGROUP_ROOT#g" \
    -e "s#@MAX_PODS@#${MAX_PODS:-110}#g" -e "s#@CLUSTER_DNS@#${CLUSTER_DNS:+clusterDNS: [$CLUSTER_DNS]}#g" \
    -e "s#@PORTMAP@#$([ "${PORTMAP:-1}" = 0 ] || echo ', {"type": "portmap", "capabilities": {"portMappings": true}, "snat": true}')#g" \
    "$HACK_DIR/kubelet-node/$1" >"$2"
}
cni_bin_dir() {
  local d; for d in /opt/cni/bin /usr/lib/cni; do [ -x "$d/bridge" ] && { echo "$d"; return; }; done
  die "no CNI plugins in /opt/cni/bin or /usr/lib/cni (apt-get install containernetworking-plugins)"
}
# wait_for NAME SECONDS CMD...: poll CMD until it succeeds; fail early when NAME died
wait_for() {
  local name=$1 t=$2; shift 2
  for _ in $(seq $((t * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    alive "$name" || { tail -30 "$LOGS/$name.log" >&2; die "$name exited (log: $LOGS/$name.log)"; }
    sleep 0.2
  done
  tail -30 "$LOGS/$name.log" >&2; die "$name: not ready after ${t}s (log: $LOGS/$name.log)"
}
start() { # NAME CMD...: in the background, its PID recorded
  local name=$1; shift
  setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  echo $! >"$PIDS/$name.pid"
}

# host_hold / host_release: count this node among the host's kubelet nodes; the first saves the sysctls the
# kubelet sets and which of its fixed directories did not exist, the last puts them back
host_hold() {
  mkdir -p "$HOST_STATE/nodes"
  (
    flock 9
    if [ -z "$(ls -A "$HOST_STATE/nodes")" ]; then
      for s in $SYSCTLS; do echo "$s $(cat "/proc/sys/$s")"; done >"$HOST_STATE/sysctl.before"
      # the device-plugin socket's dir is a constant of the kubelet; /var/log/containers holds its symlinks
      for d in /var/lib/kubelet /var/log/containers; do [ -e "$d" ] || echo "$d"; done >"$HOST_STATE/dirs-created"
    fi
    echo "$KUBELET_DIR" >"$HOST_STATE/nodes/$hash"
  ) 9>"$HOST_STATE/.lock"
}
host_release() {
  [ -d "$HOST_STATE/nodes" ] || return 0
  (
    flock 9
    # a node that holds nothing (stopped already, or never up) puts nothing back
    [ -f "$HOST_STATE/nodes/$hash" ] || exit 0
    rm -f "$HOST_STATE/nodes/$hash"
    [ -z "$(ls -A "$HOST_STATE/nodes")" ] || exit 0
    local s v d
    while read -r s v; do
      [ "$(cat "/proc/sys/$s")" = "$v" ] || { echo "$v" >"/proc/sys/$s" && log "restored $s=$v"; }
    done <"$HOST_STATE/sysctl.before"
    while read -r d; do [ -n "$d" ] && rm -rf "$d" && log "removed $d"; done <"$HOST_STATE/dirs-created"
    rm -f "$HOST_STATE/sysctl.before" "$HOST_STATE/dirs-created"
  ) 9>"$HOST_STATE/.lock"
}

# cgroups: CGROUP_ROOT in every v1 hierarchy (the kubelet refuses a cgroupRoot that does not exist; a new
# cpuset cgroup needs its cpus and mems)
make_cgroups() {
  local h d
  for h in /sys/fs/cgroup/*/; do
    h=${h%/}; [ "$h" = /sys/fs/cgroup/unified ] && continue
    grep -q " $h cgroup " /proc/mounts || continue
    for d in "$h/runlet-kubelet" "$h$CGROUP_ROOT"; do
      mkdir -p "$d"
      if [ -f "$h/cpuset.cpus" ] && [ -z "$(cat "$d/cpuset.cpus")" ]; then
        cat "$h/cpuset.cpus" >"$d/cpuset.cpus"; cat "$h/cpuset.mems" >"$d/cpuset.mems"
      fi
    done
  done
}
remove_cgroups() {
  local h
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$h${CGROUP_ROOT#/}" ] && { find "$h${CGROUP_ROOT#/}" -depth -type d -exec rmdir {} \; 2>/dev/null || true; }
    rmdir "${h}runlet-kubelet" 2>/dev/null || true
  done
}

cmd_images() {
  [ -S "$SOCK" ] || die "containerd of node $NODE_NAME is not running ($SOCK)"
  local imgs=("$@")
  [ ${#imgs[@]} -gt 0 ] || imgs=("$PAUSE_IMAGE" localhost/runlet/busybox:latest localhost/runlet/testserver:latest)
  for i in "${imgs[@]}"; do
    podman image exists "$i" && continue
    [ "$i" = "$PAUSE_IMAGE" ] || die "image $i is not in podman's storage (hack/images.sh builds the test images)"
    build_pause
  done
  local tar=$KUBELET_DIR/images.tar
  rm -f "$tar"
  podman save -q -m --format docker-archive -o "$tar" "${imgs[@]}"
  ctr images import "$tar" >/dev/null
  rm -f "$tar"
  log "imported ${#imgs[@]} images into node $NODE_NAME's containerd"
}
# build_pause: the pause image as upstream builds it, a static pause.c of CP_K8S_VERSION, user 65535
build_pause() {
  local src root
  src=$(cd "$HACK_DIR/cp-modules/k8s" && GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
  root=$(mktemp -d)
  gcc -Os -static -DVERSION="${CP_K8S_VERSION}-runlet" -o "$root/pause" "$src" && strip "$root/pause"
  tar --numeric-owner -C "$root" -cf - . |
    podman import -q --change 'USER 65535:65535' --change 'ENTRYPOINT ["/pause"]' - "$PAUSE_IMAGE" >/dev/null
  rm -rf "$root"
  log "built $PAUSE_IMAGE"
}

cmd_up() {
  for b in "$KUBELET" "$CONTAINERD" "$CTR"; do [ -x "$b" ] || die "$b is missing: run hack/kubelet-build.sh"; done
  [ "$NODE_IP" != 127.0.0.1 ] || die "NODE_IP is loopback: the kubelet refuses it (the host needs an address)"
  for p in $((PORT_BASE + 250)) $((PORT_BASE + 248)) $((PORT_BASE + 10)); do
    ss -Hltn "sport = :$p" | grep -q . && die "port $p is in use (PORT_BASE=$PORT_BASE)"
  done
  mkdir -p "$LOGS" "$PIDS" "$RUN" "$KUBELET_DIR"/{containerd,cni/net.d,cni/ipam,cdi,root,pki,pod-logs,volume-plugins}
  cat >"$KUBELET_DIR/env" <<EOF
NODE_NAME=$NODE_NAME
KUBELET_URL=https://$NODE_IP:$((PORT_BASE + 250))
CONTAINERD_SOCK=$SOCK
CONTAINERD_PID_FILE=$PIDS/containerd.pid
KUBELET_PID_FILE=$PIDS/kubelet.pid
CGROUP_ROOT=$CGROUP_ROOT
EOF
  if [ -n "${WATCH_PID:-}" ] && ! alive watchdog; then
    # stops the node if its caller dies without stopping it (a test's timeout, SIGKILL)
    # shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" down' kubelet-node-watchdog \
      "$WATCH_PID" "$HACK_DIR/kubelet-node.sh" </dev/null >>"$LOGS/watchdog.log" 2>&1 &
    echo $! >"$PIDS/watchdog.pid"
  fi
  host_hold
  make_cgroups
  # the network is written again from the Node's podCIDR, which may differ from a previous cluster's
  rm -f "$KUBELET_DIR/cni/net.d/"*
  fill net.tmpl.in "$KUBELET_DIR/cni/net.tmpl"
  fill containerd.toml.in "$KUBELET_DIR/containerd/config.toml"
  rm -rf "$KUBELET_DIR/certs.d" && mkdir -p "$KUBELET_DIR/certs.d"
  if [ -n "${REGISTRY:-}" ]; then
    mkdir -p "$KUBELET_DIR/certs.d/$REGISTRY"
    printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "$REGISTRY" "$REGISTRY" \
      >"$KUBELET_DIR/certs.d/$REGISTRY/hosts.toml"
  fi
  if ! alive containerd; then
    start containerd "$CONTAINERD" --config "$KUBELET_DIR/containerd/config.toml"
    wait_for containerd 30 "$CTR" --address "$SOCK" version
    log "containerd up (pid $(cat "$PIDS/containerd.pid"), $SOCK)"
  fi
  cmd_images
  fill kubelet-config.yaml.in "$KUBELET_DIR/config.yaml"
  if ! alive kubelet; then
    start kubelet "$KUBELET" --config "$KUBELET_DIR/config.yaml" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" \
      --bootstrap-kubeconfig "$PKI/bootstrap.kubeconfig" --kubeconfig "$KUBELET_DIR/kubelet.kubeconfig" \
      --root-dir "$KUBELET_DIR/root" --cert-dir "$KUBELET_DIR/pki" --v="${KUBELET_V:-0}"
  fi
  wait_for kubelet 120 node_ready
  log "node $NODE_NAME Ready (kubelet pid $(cat "$PIDS/kubelet.pid"), https://$NODE_IP:$((PORT_BASE + 250)))"
}
node_ready() {
  [ "$("$KUBECTL" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

cmd_down() {
  local p
  # the watchdog first, so that it does not race us (unless we are the watchdog: it execs this script)
  [ "$(cat "$PIDS/watchdog.pid" 2>/dev/null)" = "$$" ] && rm -f "$PIDS/watchdog.pid"
  stop_pid watchdog "$PIDS/watchdog.pid" 1 2>/dev/null
  # the pods go through the kubelet while it runs, so that their sandboxes and networks are torn down
  if alive kubelet && alive containerd; then
    "$KUBECTL" delete pods -A --field-selector "spec.nodeName=$NODE_NAME" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    for _ in $(seq 60); do [ -z "$(ctr tasks ls -q 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  stop_pid kubelet "$PIDS/kubelet.pid" 10
  # what the kubelet did not stop: killed and deleted through containerd (a shim exits with its last task)
  if alive containerd && [ -n "$(ctr tasks ls -q 2>/dev/null)" ]; then
    for p in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill -s SIGKILL "$p" >/dev/null 2>&1 || true; done
    sleep 1
    for p in $(ctr tasks ls -q 2>/dev/null); do ctr tasks delete -f "$p" >/dev/null 2>&1 || true; done
    for p in $(ctr containers ls -q 2>/dev/null); do ctr containers delete "$p" >/dev/null 2>&1 || true; done
  fi
  stop_pid containerd "$PIDS/containerd.pid" 10
  # shims left behind: exactly those serving this node's containerd (their command line names its socket)
  for p in $(pgrep -f -- "-address $SOCK( |$)" || true); do kill -KILL "$p" 2>/dev/null && log "killed leftover shim $p"; done
  # mounts: the kubelet's rshared bind of its root dir, volumes, netns, container roots; innermost first
  awk -v a="$KUBELET_DIR/" -v b="$RUN/" 'index($2, a) == 1 || index($2, b) == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  remove_cgroups
  ip link delete "$NET" 2>/dev/null && log "removed bridge $NET"
  # libcni's result cache is fixed at /var/lib/cni/results: this network's entries, and its leases
  rm -f /var/lib/cni/results/"$NET"-* 2>/dev/null || true
  rm -rf "$KUBELET_DIR/cni/ipam" "$RUN"
  "$KUBECTL" delete node "$NODE_NAME" --wait=false >/dev/null 2>&1 || true
  host_release
  log "node $NODE_NAME stopped"
}

case $CMD in
  up) cmd_up ;;
  down) cmd_down ;;
  images) cmd_images "$@" ;;
  *) die "usage: kubelet-node.sh up|down|images [IMAGE...]" ;;
esac
