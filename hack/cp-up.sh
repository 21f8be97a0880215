#!/bin/bash
# Start a local Kubernetes control plane: etcd -> kube-apiserver -> kube-scheduler + kube-controller-manager,
# optionally kube-proxy and the cluster DNS add-on. Everything listens on 127.0.0.1 but the apiserver, which
# listens on all addresses: pods reach it from their network namespaces through the `kubernetes` Service
# (10.0.0.1:443 -> HOST_IP:apiserver port, DNAT'd by kube-proxy). Kubeconfigs use https://127.0.0.1:<port>.
# Env:
#   CP_DIR     state dir (pki/, etcd/, logs/, pids/, env)   default: <repo>/.run/cp
#   PORT_BASE  etcd +379/+380, apiserver +443, scheduler +259, controller-manager +257,
#              kube-proxy healthz +256 / metrics +249                                   default: 26000
#   CP_BIN_DIR binaries from hack/cp-build.sh                 default: ~/.cache/runlet/cp-v1.37.2/bin
#   Nodes' and bootstrap tokens' requests are audited (metadata only) to LOGS/audit.log: hack/node-denials.sh
#   lists those the apiserver refused.
#   CP_WATCH_PID  if set, a watchdog stops the control plane when that process exits (used by the e2e tests)
#   HOST_IP    the apiserver's advertise address, the `kubernetes` Service's endpoint; default: the source
#              address of the default route (127.0.0.1 if there is none: then pods cannot reach the apiserver)
#   CLUSTER_CIDR  pod network, split into one NODE_CIDR_MASK (24) per Node as spec.podCIDR by the
#              controller-manager; default: 10.<244 + (PORT_BASE - 26000) / 1000>.0.0/16 (10.244.0.0/16 for
#              make run's 26000), so that local clusters on one host (make run, the tests, make conformance)
#              never hand out one address twice
#   KUBE_PROXY=1  also start kube-proxy (hack/kube-proxy.sh) for node NODE_NAME (default runlet); only one
#              kube-proxy per host: fails if another control plane's runs
#   CLUSTER_DNS=1 also apply the CoreDNS add-on (hack/cluster-dns.sh; builds its image once if missing)
# Bootstrap tokens are enabled, with kube-public/cluster-info and kubeadm's RBAC for them
# (hack/bootstrap-tokens.sh): hack/join-command.sh prints a `runlet join` command.
# Idempotent: if this CP_DIR's control plane is already running, it only prints how to use it (and starts
# what KUBE_PROXY / CLUSTER_DNS ask for).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CP_DIR=${CP_DIR:-$REPO_ROOT/.run/cp}
PORT_BASE=${PORT_BASE:-26000}
ETCD_PORT=$((PORT_BASE+379)); ETCD_PEER=$((PORT_BASE+380)); API_PORT=$((PORT_BASE+443))
SCHED_PORT=$((PORT_BASE+259)); KCM_PORT=$((PORT_BASE+257))
# Service network: 10.0.0.1 is the `kubernetes` Service (in cp-pki.sh's cert), 10.0.0.10 kube-dns
SERVICE_CIDR=10.0.0.0/24
OCTET=$((244 + (PORT_BASE - 26000) / 1000)); [ "$OCTET" -ge 200 ] && [ "$OCTET" -le 255 ] || OCTET=244
CLUSTER_CIDR=${CLUSTER_CIDR:-10.$OCTET.0.0/16}; NODE_CIDR_MASK=${NODE_CIDR_MASK:-24}
PKI=$CP_DIR/pki; LOGS=$CP_DIR/logs; PIDS=$CP_DIR/pids
COMPONENTS="etcd kube-apiserver kube-scheduler kube-controller-manager"
ADMIN=$PKI/admin.kubeconfig

for b in etcd kube-apiserver kube-scheduler kube-controller-manager kubectl; do
  [ -x "$CP_BIN_DIR/$b" ] || die "$CP_BIN_DIR/$b is missing: run hack/cp-build.sh first"
done
alive() { [ -f "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }
# addons: kube-proxy and the cluster DNS, when asked for (callers without them are unchanged).
# `|| return`: called as `addons || fail`, where set -e does not stop at a failing command.
addons() {
  if [ "${KUBE_PROXY:-0}" = 1 ]; then
    CP_DIR="$CP_DIR" PORT_BASE="$PORT_BASE" CLUSTER_CIDR="$CLUSTER_CIDR" bash "$HACK_DIR/kube-proxy.sh" up || return
  fi
  if [ "${CLUSTER_DNS:-0}" = 1 ]; then CP_DIR="$CP_DIR" bash "$HACK_DIR/cluster-dns.sh" up || return; fi
}
n=0; for c in $COMPONENTS; do alive "$c" && n=$((n+1)); done
if [ $n = 4 ] && [ "$(cat "$CP_DIR/port-base" 2>/dev/null)" = "$PORT_BASE" ] &&
  [ "$(sed -n 's/^export CLUSTER_CIDR=//p' "$CP_DIR/env" 2>/dev/null)" = "$CLUSTER_CIDR" ]; then
  log "control plane already running in $CP_DIR (apiserver https://127.0.0.1:$API_PORT)"
  addons
  echo "export KUBECONFIG=$ADMIN"; exit 0
fi
# one kube-proxy per host: find out before starting anything
if [ "${KUBE_PROXY:-0}" = 1 ]; then CP_DIR="$CP_DIR" bash "$HACK_DIR/kube-proxy.sh" check; fi
if [ $n -gt 0 ]; then log "a partial control plane is running in $CP_DIR: stopping it first"; CP_DIR="$CP_DIR" bash "$HACK_DIR/cp-down.sh"; fi

# the source address of the default route (as hack/conformance/run.sh's NODE_IP): reachable from pods'
# network namespaces through their bridge's gateway, and not loopback, which the apiserver refuses as the
# `kubernetes` Service's endpoint. `ip route get` only looks up the route, it sends nothing.
if [ -z "${HOST_IP:-}" ]; then
  HOST_IP=$(ip -4 -o route get 1.0.0.0 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  HOST_IP=${HOST_IP:-$(ip -4 -o addr show scope global 2>/dev/null | awk '$2 !~ /^(podman|cni|veth|runlet)/ {sub("/.*", "", $4); print $4; exit}')}
fi
if [ -z "$HOST_IP" ] || [ "$HOST_IP" = 127.0.0.1 ]; then
  HOST_IP=127.0.0.1
  log "warning: no non-loopback address on this host: pods will not reach the apiserver through the kubernetes Service"
fi
# lease: the apiserver keeps the `kubernetes` Service's endpoints at HOST_IP:API_PORT. It rejects a
# loopback endpoint, so without a host address there are none (as before).
RECONCILER=lease; [ "$HOST_IP" != 127.0.0.1 ] || RECONCILER=none

# ss matches the port on any address: the apiserver listens on all of them, the others on 127.0.0.1
for p in $ETCD_PORT $ETCD_PEER $API_PORT $SCHED_PORT $KCM_PORT; do
  if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
    die "port $p is in use (PORT_BASE=$PORT_BASE); stop what uses it or pick another PORT_BASE"
  fi
done
mkdir -p "$PKI" "$LOGS" "$PIDS"
echo "$PORT_BASE" >"$CP_DIR/port-base"
bash "$HACK_DIR/cp-pki.sh" "$PKI" "$API_PORT" "$HOST_IP"
log "PKI ready in $PKI"

start() { # name cmd...
  local name=$1; shift
  setsid "$@" </dev/null >"$LOGS/$name.log" 2>&1 &
  echo $! >"$PIDS/$name.pid"
}
# wait_for NAME TIMEOUT CMD... : poll until CMD succeeds, fail early if NAME died
wait_for() {
  local name=$1 t=$2; shift 2
  for _ in $(seq 1 $((t*5))); do
    if "$@" >/dev/null 2>&1; then log "${WHAT:-$name ready}"; return 0; fi
    if ! alive "$name"; then
      echo "$name exited; tail of $LOGS/$name.log:" >&2; tail -30 "$LOGS/$name.log" >&2; return 1; fi
    sleep 0.2
  done
  echo "$name not ready after ${t}s; tail of $LOGS/$name.log:" >&2; tail -30 "$LOGS/$name.log" >&2; return 1
}
fail() { CP_DIR="$CP_DIR" bash "$HACK_DIR/cp-down.sh" >/dev/null 2>&1 || true; die "control plane did not come up (logs: $LOGS)"; }
CURL_ADMIN=(curl -fsS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key")

if [ -n "${CP_WATCH_PID:-}" ]; then
  # stops the control plane if the test process dies without tearing it down (timeout panic, SIGKILL)
  # shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; CP_DIR="$2" exec bash "$3"' \
    cp-watchdog "$CP_WATCH_PID" "$CP_DIR" "$HACK_DIR/cp-down.sh" </dev/null >/dev/null 2>&1 &
  echo $! >"$PIDS/watchdog.pid"
fi

start etcd "$CP_BIN_DIR/etcd" --name runlet-local --data-dir "$CP_DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
  --initial-cluster "runlet-local=http://127.0.0.1:$ETCD_PEER" \
  --unsafe-no-fsync --quota-backend-bytes=2147483648 --log-level warn
wait_for etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health" || fail

start kube-apiserver "$CP_BIN_DIR/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 0.0.0.0 --advertise-address "$HOST_IP" --secure-port "$API_PORT" \
  --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --client-ca-file "$PKI/ca.crt" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --service-cluster-ip-range "$SERVICE_CIDR" \
  --authorization-mode Node,RBAC --enable-bootstrap-token-auth \
  --enable-admission-plugins NodeRestriction \
  --allow-privileged=true \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP,Hostname \
  --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
  --endpoint-reconciler-type "$RECONCILER" \
  --audit-policy-file "$HACK_DIR/audit-policy.yaml" --audit-log-path "$LOGS/audit.log" \
  --audit-log-maxsize 200 --audit-log-maxbackup 5 \
  --profiling=false --v=1
wait_for kube-apiserver 120 "${CURL_ADMIN[@]}" "https://127.0.0.1:$API_PORT/readyz" || fail

K=$PKI/kube-scheduler.kubeconfig
start kube-scheduler "$CP_BIN_DIR/kube-scheduler" --kubeconfig "$K" \
  --authentication-kubeconfig "$K" --authorization-kubeconfig "$K" \
  --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --v=1
K=$PKI/kube-controller-manager.kubeconfig
start kube-controller-manager "$CP_BIN_DIR/kube-controller-manager" --kubeconfig "$K" \
  --authentication-kubeconfig "$K" --authorization-kubeconfig "$K" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --use-service-account-credentials=true --controllers '*,bootstrapsigner,tokencleaner' \
  --allocate-node-cidrs=true --cluster-cidr "$CLUSTER_CIDR" --node-cidr-mask-size "$NODE_CIDR_MASK" \
  --service-cluster-ip-range "$SERVICE_CIDR" --v=1

CP_DIR="$CP_DIR" API_PORT="$API_PORT" HOST_IP="$HOST_IP" bash "$HACK_DIR/bootstrap-tokens.sh" || fail
log "TLS bootstrap ready: bootstrap token, kubeadm's RBAC, kube-public/cluster-info"
wait_for kube-scheduler 60 curl -fsSk "https://127.0.0.1:$SCHED_PORT/healthz" || fail
wait_for kube-controller-manager 60 curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz" || fail
# ServiceAccount admission rejects pods until the controller made default/default.
WHAT="default ServiceAccount exists" wait_for kube-controller-manager 60 "${CURL_ADMIN[@]}" \
  "https://127.0.0.1:$API_PORT/api/v1/namespaces/default/serviceaccounts/default" || fail

cat >"$CP_DIR/env" <<EOF
export KUBECONFIG=$ADMIN
export RUNLET_BOOTSTRAP_KUBECONFIG=$PKI/bootstrap.kubeconfig
export CP_BIN_DIR=$CP_BIN_DIR
export PORT_BASE=$PORT_BASE
export APISERVER=https://127.0.0.1:$API_PORT
export HOST_IP=$HOST_IP
export CLUSTER_CIDR=$CLUSTER_CIDR
export SERVICE_CIDR=$SERVICE_CIDR
export CLUSTER_DNS_IP=10.0.0.10
export CLUSTER_DOMAIN=cluster.local
EOF
log "control plane up: https://127.0.0.1:$API_PORT (state in $CP_DIR)"
addons || fail
echo "export KUBECONFIG=$ADMIN"
