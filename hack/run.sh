#!/bin/bash
# `make run`: everything needed for a local runlet node, then leaves it running in the background.
#   deps -> bin/runlet -> test images -> control plane (built once into ~/.cache/runlet) -> runlet -> node Ready
# Env: RUN_DIR (default <repo>/.run), PORT_BASE (26000), NODE_NAME (runlet), KUBELET_PORT (PORT_BASE+250),
#      METRICS_PORT (PORT_BASE+251), LOG_LEVEL (info), PODMAN_SOCKET (empty: runlet finds or starts podman),
#      RUNLET_ARGS (extra flags), KUBE_PROXY (1: kube-proxy on this host acts for the node, hack/kube-proxy.sh),
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

bash "$HACK_DIR/install-deps.sh"
log "building bin/runlet"
( cd "$REPO_ROOT" && go build -o bin/runlet ./cmd/runlet )
bash "$HACK_DIR/images.sh"
bash "$HACK_DIR/cp-build.sh" >/dev/null
[ "$CLUSTER_DNS" != 1 ] || bash "$HACK_DIR/coredns-build.sh" >/dev/null
# the add-ons come after the node (below), not from cp-up.sh
KUBE_PROXY=0 CLUSTER_DNS=0 bash "$HACK_DIR/cp-up.sh" >/dev/null

# a runlet from an earlier `make run` is replaced by the fresh build (its pods keep running and are re-adopted)
stop_pid runlet "$PID_FILE" 30
mkdir -p "$RUN_DIR/runlet" "$RUN_DIR/manifests"
echo "$NODE_NAME" >"$RUN_DIR/node-name"
args=(
  --kubeconfig "$PKI/runlet.kubeconfig" --nodename "$NODE_NAME"
  --address 127.0.0.1 --node-ip 127.0.0.1 --kubelet-port "$KUBELET_PORT"
  --tls-cert-file "$PKI/runlet-serving.crt" --tls-private-key-file "$PKI/runlet-serving.key"
  --client-ca-file "$PKI/ca.crt"
  --root-dir "$RUN_DIR/runlet" --pod-manifest-path "$RUN_DIR/manifests"
  --metrics-addr "127.0.0.1:$METRICS_PORT" --log-level "${LOG_LEVEL:-info}"
)
[ -n "${PODMAN_SOCKET:-}" ] && args+=(--podman-socket "$PODMAN_SOCKET")
# ClusterFirst pods resolve through kube-dns (hack/cluster-dns.yaml's fixed Service IP)
[ "$CLUSTER_DNS" = 1 ] && args+=(--cluster-dns 10.0.0.10 --cluster-domain cluster.local)
# shellcheck disable=SC2206
[ -n "${RUNLET_ARGS:-}" ] && args+=($RUNLET_ARGS)
echo "--- $(date -Is) bin/runlet ${args[*]}" >>"$LOG_FILE"
setsid "$REPO_ROOT/bin/runlet" "${args[@]}" </dev/null >>"$LOG_FILE" 2>&1 &
echo $! >"$PID_FILE"
log "runlet started (pid $(cat "$PID_FILE"), log $LOG_FILE)"

K=("$KUBECTL" --kubeconfig "$PKI/admin.kubeconfig")
for i in $(seq 1 300); do
  "${K[@]}" get node "$NODE_NAME" >/dev/null 2>&1 && break
  if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    echo "runlet exited; tail of $LOG_FILE:" >&2; tail -30 "$LOG_FILE" >&2; rm -f "$PID_FILE"; exit 1
  fi
  [ "$i" = 300 ] && { tail -30 "$LOG_FILE" >&2; die "node $NODE_NAME was not registered within 60s"; }
  sleep 0.2
done
if ! "${K[@]}" wait --for=condition=Ready "node/$NODE_NAME" --timeout=120s >/dev/null; then
  tail -30 "$LOG_FILE" >&2; die "node $NODE_NAME is not Ready"
fi
log "node $NODE_NAME is Ready"
# kube-proxy after the node: it reads the node's IPs at start (and restarts when they change)
if [ "$KUBE_PROXY" = 1 ]; then CP_DIR=$CP_DIR NODE_NAME=$NODE_NAME bash "$HACK_DIR/kube-proxy.sh" up; fi
if [ "$CLUSTER_DNS" = 1 ]; then
  CP_DIR=$CP_DIR bash "$HACK_DIR/cluster-dns.sh" up
  # CoreDNS needs the pod network (and kube-proxy for the kubernetes Service): not fatal for `make run`
  CP_DIR=$CP_DIR TIMEOUT=90s bash "$HACK_DIR/cluster-dns.sh" wait || log "warning: cluster DNS is not available yet"
fi

cd "$REPO_ROOT"
cat <<EOF

runlet is running as node "$NODE_NAME" (pid $(cat "$PID_FILE"), log ${LOG_FILE#"$REPO_ROOT"/}).
Use it:

  export KUBECONFIG=$PKI/admin.kubeconfig PATH=$CP_BIN_DIR:\$PATH
  kubectl get nodes -o wide
  kubectl apply -f examples/busybox.yaml
  kubectl get pods -o wide -w

Static pods: drop manifests into ${RUN_DIR#"$REPO_ROOT"/}/manifests/.
Stop runlet and the control plane: make stop
EOF
