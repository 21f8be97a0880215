#!/bin/bash
# `make conformance`: the upstream [NodeConformance] e2e specs against a runlet node built from this
# checkout, on a control plane of its own, then a summary.
#   deps -> control plane + e2e.test/ginkgo/agnhost (cached) -> test images -> control plane up
#   -> runlet (untainted) -> e2e.sh -> summarize.py -> everything stopped by PID (also on error / ^C)
# Env: FOCUS, SKIP, SPEC_LIST, PROCS (4), TIMEOUT (3h), EXTRA: see e2e.sh.
#      PORT_BASE (default: the first free of 25000, 24000, 23000; apiserver +443, runlet +250/+251),
#      NODE_IP (default: the source address of the default route), LOG_LEVEL (runlet's, info),
#      RUNLET_BIN (a prebuilt runlet instead of building this checkout),
#      KEEP=1 leaves the run's state dir in place (always kept when the run fails).
# Results: ~/.cache/runlet/conformance-v1.37.2/runs/<stamp>-<port base>/ (e2e/e2e.log, e2e/report.json, summary.txt,
# runlet.log, cp/logs). Exit status: 0 when no spec failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bash "$HACK_DIR/install-deps.sh"
for p in gcc libc6-dev make bzip2 python3 hostname; do # for the test images (busybox from source) and the summary
  dpkg -s "$p" >/dev/null 2>&1 || { log "installing $p"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; }
done
bash "$HACK_DIR/cp-build.sh" >/dev/null
bash "$CONF_HACK_DIR/build.sh" >/dev/null
bash "$CONF_HACK_DIR/images.sh"

# a port base of our own, held (flock) for the whole run: conformance runs of other checkouts may be up
claim_ports() {
  local base
  for base in ${PORT_BASE:-25000 24000 23000}; do
    exec 8>"/tmp/runlet-conformance-ports-$base.lock"
    if flock -n 8; then PORT_BASE=$base; return 0; fi
  done
  die "no free conformance port base (25000, 24000, 23000 are in use; set PORT_BASE)"
}
claim_ports
export PORT_BASE
# the default [NodeConformance] set unless FOCUS or SPEC_LIST narrows it
if [ -z "${SPEC_LIST:-}" ] && [ -z "${FOCUS:-}" ]; then SPEC_LIST=$CONF_HACK_DIR/lists/nodeconformance-default.txt; fi
[ -z "${SPEC_LIST:-}" ] || { [ -f "$SPEC_LIST" ] || die "SPEC_LIST $SPEC_LIST: no such file"; export SPEC_LIST=$(realpath "$SPEC_LIST"); }
NODE_NAME=runlet-conformance-$PORT_BASE
KUBELET_PORT=$((PORT_BASE+250)) METRICS_PORT=$((PORT_BASE+251))
RUN=$CONF_CACHE/runs/$(date +%Y%m%d-%H%M%S)-$PORT_BASE
export CP_DIR=$RUN/cp
PKI=$CP_DIR/pki K=("$CP_BIN_DIR/kubectl" --kubeconfig "$CP_DIR/pki/admin.kubeconfig")
mkdir -p "$RUN/runlet"

# The apiserver refuses to proxy nodes/proxy to a loopback address: the node's InternalIP (and so the
# kubelet API's listen address) is the host's own address on its default route when it has one.
if [ -z "${NODE_IP:-}" ]; then
  NODE_IP=$(ip -4 -o route get 1.0.0.0 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  NODE_IP=${NODE_IP:-$(ip -4 -o addr show scope global 2>/dev/null | awk '$2 !~ /^(podman|cni|veth)/ {sub("/.*", "", $4); print $4; exit}')}
  [ -n "$NODE_IP" ] || { NODE_IP=127.0.0.1; log "warning: no non-loopback address; nodes/proxy specs will fail"; }
fi

RUNLET_PID= E2E_PID= WATCH_PID= RC=1
teardown() {
  trap '' INT TERM
  [ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null || true
  if [ -n "$E2E_PID" ] && kill -0 "$E2E_PID" 2>/dev/null; then
    log "interrupting the e2e run (pid $E2E_PID)"
    kill -INT "$E2E_PID" 2>/dev/null || true # ginkgo stops its parallel processes itself
    for _ in $(seq 300); do kill -0 "$E2E_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$E2E_PID" 2>/dev/null && kill -KILL -- "-$E2E_PID" 2>/dev/null || true # its own process group
  fi
  stop_pid runlet "$RUN/runlet.pid" 30
  CP_DIR=$CP_DIR bash "$HACK_DIR/cp-down.sh" || true
  # what the e2e namespaces left in podman (runlet labels its objects with the node name)
  local f=label=io.runlet.owner=$NODE_NAME pods ctrs
  pods=$(podman pod ps -q --filter "$f" 2>/dev/null || true)
  # shellcheck disable=SC2086
  [ -z "$pods" ] || podman pod rm -f -t 0 $pods >/dev/null 2>&1 || true
  ctrs=$(podman ps -aq --filter "$f" 2>/dev/null || true)
  # shellcheck disable=SC2086
  [ -z "$ctrs" ] || podman rm -f -t 0 $ctrs >/dev/null 2>&1 || true
  rm -rf "$CP_DIR/etcd"
  # the tmpfs volumes of pods still being deleted when runlet stopped (innermost first)
  awk -v p="$RUN/runlet/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount "$m" || true; done
  if [ "$RC" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$RUN/runlet"; fi
  log "state and logs in $RUN"
}
trap 'teardown' EXIT
trap 'log "interrupted"; exit 130' INT TERM

if [ -n "${RUNLET_BIN:-}" ]; then
  cp "$RUNLET_BIN" "$RUN/runlet-bin"
else
  log "building runlet from $REPO_ROOT"
  ( cd "$REPO_ROOT" && go build -o "$RUN/runlet-bin" ./cmd/runlet )
fi
# the control plane stops itself if this script dies without tearing it down (CP_WATCH_PID)
CP_WATCH_PID=$$ bash "$HACK_DIR/cp-up.sh" >/dev/null 8>&-
# As hack/run.sh starts it, but untainted (e2e pods carry no toleration) and reachable at NODE_IP.
args=(
  --kubeconfig "$PKI/runlet.kubeconfig" --nodename "$NODE_NAME" --register-with-taints=
  --address "$NODE_IP" --node-ip "$NODE_IP" --kubelet-port "$KUBELET_PORT"
  --tls-cert-file "$PKI/runlet-serving.crt" --tls-private-key-file "$PKI/runlet-serving.key"
  --client-ca-file "$PKI/ca.crt"
  --root-dir "$RUN/runlet" --metrics-addr "127.0.0.1:$METRICS_PORT" --log-level "${LOG_LEVEL:-info}"
)
echo "--- $(date -Is) runlet ${args[*]}" >"$RUN/runlet.log"
setsid "$RUN/runlet-bin" "${args[@]}" </dev/null >>"$RUN/runlet.log" 2>&1 8>&- &
RUNLET_PID=$!
echo "$RUNLET_PID" >"$RUN/runlet.pid"
# runlet stops (SIGTERM) if this script is killed without tearing down
setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill "$2" 2>/dev/null' \
  runlet-watchdog $$ "$RUNLET_PID" </dev/null >/dev/null 2>&1 8>&- &
WATCH_PID=$!
log "runlet started (pid $RUNLET_PID, node $NODE_NAME, kubelet API $NODE_IP:$KUBELET_PORT)"
for i in $(seq 1 600); do
  "${K[@]}" get node "$NODE_NAME" >/dev/null 2>&1 && break
  kill -0 "$RUNLET_PID" 2>/dev/null || { tail -30 "$RUN/runlet.log" >&2; die "runlet exited"; }
  [ "$i" = 600 ] && { tail -30 "$RUN/runlet.log" >&2; die "node $NODE_NAME was not registered within 120s"; }
  sleep 0.2
done
"${K[@]}" wait --for=condition=Ready "node/$NODE_NAME" --timeout=120s >/dev/null || { tail -30 "$RUN/runlet.log" >&2; die "node $NODE_NAME is not Ready"; }
log "node $NODE_NAME is Ready"

log "running the e2e specs (PROCS=${PROCS:-4}; the default set takes 30-60 min on 2 cores); log: $RUN/e2e/e2e.log"
setsid env KUBECONFIG="$PKI/admin.kubeconfig" OUT="$RUN/e2e" bash "$CONF_HACK_DIR/e2e.sh" </dev/null 8>&- &
E2E_PID=$!
set +e
wait "$E2E_PID"; e2e_rc=$?
set -e
E2E_PID=
log "e2e.test exited with $e2e_rc"
[ -f "$RUN/e2e/report.json" ] || { tail -30 "$RUN/e2e/e2e.log" >&2; die "no report: the suite did not run"; }
set +e
python3 "$CONF_HACK_DIR/summarize.py" "$RUN/e2e/report.json" ${SPEC_LIST:+--list "$SPEC_LIST"} | tee "$RUN/summary.txt"
RC=${PIPESTATUS[0]}
set -e
exit "$RC"
