#!/bin/bash
# `make run`: everything needed for local runlet nodes, then leaves them running in the background.
#   deps -> bin/runlet -> test images -> control plane (built once into ~/.cache/runlet) -> runlets -> nodes Ready
#   -> kube-proxy and CoreDNS
# Env: RUN_DIR (default <repo>/.run), PORT_BASE (26000), NODE_NAME (runlet), KUBELET_PORT (PORT_BASE+250),
#      METRICS_PORT (PORT_BASE+251), NODES (1; node i > 1 is NODE_NAME-i, with its ports 10·(i-1) higher),
#      LOG_LEVEL (info), PODMAN_SOCKET (empty: runlet finds or starts podman),
#      RUNTIME (podman, or runc: runlet runs pods with runc and conmon, its image store loaded from
#      podman's test images), RUNLET_ARGS (extra flags), KUBE_PROXY (1: kube-proxy on this host acts for the node, hack/kube-proxy.sh),
#      CLUSTER_DNS (1: CoreDNS as kube-dns 10.0.0.10, hack/cluster-dns.sh, and runlet's --cluster-dns).
# Stop with `make stop` (hack/stop.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RUN_DIR=${RUN_DIR:-$REPO_ROOT/.run}
export CP_DIR=$RUN_DIR/cp PORT_BASE=${PORT_BASE:-26000}
NODE_NAME=${NODE_NAME:-runlet}
KUBELET_PORT=${KUBELET_PORT:-$((PORT_BASE+250))}
METRICS_PORT=${METRICS_PORT:-$((PORT_BASE+251))}
PID_FILE=$RUN_DIR/runlet.pid LOG_FILE=$RUN_DIR/runlet.log
PKI=$CP_DIR/pki KUBECTL=$CP_BIN_DIR/kubectl
KUBE_PROXY=${KUBE_PROXY:-1} CLUSTER_DNS=${CLUSTER_DNS:-1}
RUNTIME=${RUNTIME:-podman}
[ "$RUNTIME" = podman ] || [ "$RUNTIME" = runc ] || die "RUNTIME=$RUNTIME: podman or runc"

bash "$HACK_DIR/install-deps.sh"
log "building bin/runlet"
( cd "$REPO_ROOT" && go build -o bin/ ./cmd/runlet ./cmd/runlet-pause )
bash "$HACK_DIR/images.sh"
bash "$HACK_DIR/cp-build.sh" >/dev/null
[ "$CLUSTER_DNS" != 1 ] || bash "$HACK_DIR/coredns-build.sh" >/dev/null
# the add-ons come after the node (below), not from cp-up.sh
KUBE_PROXY=0 CLUSTER_DNS=0 bash "$HACK_DIR/cp-up.sh" >/dev/null

NODES=${NODES:-1}
[[ "$NODES" =~ ^[1-9]$ ]] || die "NODES=$NODES: 1 to 9 nodes"
mkdir -p "$RUN_DIR/manifests"
K=("$KUBECTL" --kubeconfig "$PKI/admin.kubeconfig")
: >"$RUN_DIR/node-name.new"
# node i: its name, state dir, PID and log files, and ports (node 1 keeps the names of a single-node run)
node_name() { if [ "$1" = 1 ]; then echo "$NODE_NAME"; else echo "$NODE_NAME-$1"; fi; }
node_file() { if [ "$1" = 1 ]; then echo "$RUN_DIR/$2"; else echo "$RUN_DIR/${2%%.*}-$1${2#runlet}"; fi; }

start_node() {
  local i=$1 name pid_file log_file root
  name=$(node_name "$i") pid_file=$(node_file "$i" runlet.pid) log_file=$(node_file "$i" runlet.log) root=$(node_file "$i" runlet)
  # a runlet from an earlier `make run` is replaced by the fresh build (its pods keep running and are re-adopted)
  stop_pid "runlet $name" "$pid_file" 30
  mkdir -p "$root"
  echo "$name" >>"$RUN_DIR/node-name.new"
  local args=(
    --bootstrap-kubeconfig "$PKI/bootstrap.kubeconfig" --nodename "$name"
    --address 127.0.0.1 --node-ip 127.0.0.1 --kubelet-port "$((KUBELET_PORT + 10 * (i - 1)))"
    --tls-cert-file "$PKI/runlet-serving.crt" --tls-private-key-file "$PKI/runlet-serving.key"
    --client-ca-file "$PKI/ca.crt" --root-dir "$root"
    --metrics-addr "127.0.0.1:$((METRICS_PORT + 10 * (i - 1)))" --log-level "${LOG_LEVEL:-info}"
  )
  [ "$i" != 1 ] || args+=(--pod-manifest-path "$RUN_DIR/manifests")
  [ -n "${PODMAN_SOCKET:-}" ] && args+=(--podman-socket "$PODMAN_SOCKET")
  if [ "$RUNTIME" = runc ]; then
    args+=(--runtime runc)
    # no registry: the test images go from podman's storage into runc's image store
    local images=(localhost/runlet/busybox:latest)
    [ "$CLUSTER_DNS" != 1 ] || images+=("$(coredns_image)")
    rm -f "$RUN_DIR/images.tar"
    podman save --multi-image-archive --format docker-archive -o "$RUN_DIR/images.tar" "${images[@]}" >/dev/null
    "$REPO_ROOT/bin/runlet" image load --root-dir "$root" "$RUN_DIR/images.tar" >/dev/null
  fi
  # ClusterFirst pods resolve through kube-dns (hack/cluster-dns.yaml's fixed Service IP)
  [ "$CLUSTER_DNS" = 1 ] && args+=(--cluster-dns 10.0.0.10 --cluster-domain cluster.local)
  # shellcheck disable=SC2206
  [ -n "${RUNLET_ARGS:-}" ] && args+=($RUNLET_ARGS)
  echo "--- $(date -Is) bin/runlet ${args[*]}" >>"$log_file"
  setsid "$REPO_ROOT/bin/runlet" "${args[@]}" </dev/null >>"$log_file" 2>&1 &
  echo $! >"$pid_file"
  log "runlet started for node $name (pid $(cat "$pid_file"), log $log_file)"
}

wait_node() {
  local name pid_file log_file
  name=$(node_name "$1") pid_file=$(node_file "$1" runlet.pid) log_file=$(node_file "$1" runlet.log)
  for i in $(seq 1 300); do
    "${K[@]}" get node "$name" >/dev/null 2>&1 && break
    if ! kill -0 "$(cat "$pid_file")" 2>/dev/null; then
      echo "runlet exited; tail of $log_file:" >&2; tail -30 "$log_file" >&2; rm -f "$pid_file"; exit 1
    fi
    [ "$i" = 300 ] && { tail -30 "$log_file" >&2; die "node $name was not registered within 60s"; }
    sleep 0.2
  done
  if ! "${K[@]}" wait --for=condition=Ready "node/$name" --timeout=120s >/dev/null; then
    tail -30 "$log_file" >&2; die "node $name is not Ready"
  fi
  log "node $name is Ready ($("${K[@]}" get node "$name" -o jsonpath='{.spec.podCIDR}'))"
}

for i in $(seq 1 "$NODES"); do start_node "$i"; done
# nodes of an earlier, larger run are stopped (stop.sh reads the list)
while read -r old; do
  grep -qx "$old" "$RUN_DIR/node-name.new" && continue
  n=${old##*-}
  [[ "$old" = "$NODE_NAME-$n" && "$n" =~ ^[0-9]+$ ]] && stop_pid "runlet $old" "$(node_file "$n" runlet.pid)" 30
done < <(cat "$RUN_DIR/node-name" 2>/dev/null || true)
mv "$RUN_DIR/node-name.new" "$RUN_DIR/node-name"
for i in $(seq 1 "$NODES"); do wait_node "$i"; done
PID_FILE=$RUN_DIR/runlet.pid LOG_FILE=$RUN_DIR/runlet.log

# kube-proxy after the node: it reads the node's IPs at start (and restarts when they change)
if [ "$KUBE_PROXY" = 1 ]; then CP_DIR=$CP_DIR NODE_NAME=$NODE_NAME bash "$HACK_DIR/kube-proxy.sh" up; fi
if [ "$CLUSTER_DNS" = 1 ]; then
  CP_DIR=$CP_DIR bash "$HACK_DIR/cluster-dns.sh" up
  # CoreDNS needs the pod network (and kube-proxy for the kubernetes Service): not fatal for `make run`
  CP_DIR=$CP_DIR TIMEOUT=90s bash "$HACK_DIR/cluster-dns.sh" wait || log "warning: cluster DNS is not available yet"
fi

cd "$REPO_ROOT"
cat <<EOF

runlet is running as node "$NODE_NAME" (pid $(cat "$PID_FILE"), log ${LOG_FILE#"$REPO_ROOT"/})$([ "$NODES" = 1 ] || echo " and $((NODES - 1)) more ($NODE_NAME-2…, logs .run/runlet-N.log)").
Pods get addresses from each node's podCIDR and reach each other's; kube-proxy serves Services on this
host and CoreDNS answers cluster.local. Use it:

  export KUBECONFIG=$PKI/admin.kubeconfig PATH=$CP_BIN_DIR:\$PATH
  kubectl get nodes -o wide
  kubectl apply -f examples/busybox.yaml
  kubectl get pods -o wide -w

Each node joined as system:node:<name> by TLS bootstrap (a bootstrap token, kubeadm's RBAC). Another
machine joins this cluster as a runlet node with (reachable at this host's address):

  $(bash "$HACK_DIR/join-command.sh" "$CP_DIR")

Static pods: drop manifests into ${RUN_DIR#"$REPO_ROOT"/}/manifests/.
Stop runlet and the control plane: make stop
EOF
