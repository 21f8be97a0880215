#!/bin/bash
# `make conformance`: upstream e2e specs against runlet nodes built from this checkout, on a control
# plane of its own, then a summary. SET picks the specs and the cluster (lib.sh's conf_set):
#   nodeconformance (default)  the default [NodeConformance] set, 236 specs, one runlet node
#   conformance                all 462 [Conformance] specs ([Serial] ones last, alone), two runlet nodes
#   pod-api                    the 163 specs of the pod API of 1.34-1.37 (lists/pod-api.txt), two nodes
#   deps -> control plane + e2e.test/ginkgo/agnhost (cached) -> test images -> control plane up
#   -> the test images' registry stand-in -> runlets (untainted) -> kube-proxy + CoreDNS -> e2e.sh
#   -> summarize.py
#   -> everything stopped by PID and the nodes' network removed (also on error / ^C)
# Env: SET, FOCUS, SKIP, SPEC_LIST, PROCS (4), TIMEOUT (3h, SET=conformance 6h), EXTRA: see e2e.sh.
#      ADDONS (1): kube-proxy on the host for the first node (hack/kube-proxy.sh) and CoreDNS as kube-dns
#        10.0.0.10 (hack/cluster-dns.sh, runlet's --cluster-dns), as a user's cluster has them. Only one
#        kube-proxy can own a host: when another control plane's runs (`make run` starts one),
#        SET=nodeconformance goes on without both, as ADDONS=0 does, and SET=conformance stops.
#      PORT_BASE (default: the first free of 25000, 24000, 23000; apiserver +443; runlet node 1 kubelet
#        API +250, metrics +251, node 2 +260/+261 as `NODES=2 make run`; kube-proxy healthz +256, metrics +249;
#        the test images' registry +500),
#      NODE_IP (default: the source address of the default route), LOG_LEVEL (runlet's, info),
#      RUNLET_BIN (a prebuilt runlet instead of building this checkout),
#      RUNTIME (podman, or runc: the nodes run pods with runc and conmon, their image stores loaded with
#        the test images from podman's storage, as `make run RUNTIME=runc` does),
#      AGENT (runlet, or kubelet: the same run against kubelet nodes on containerd, hack/kubelet-node.sh,
#        as the reference that tells what this machine fails from what runlet fails; RUNTIME is ignored),
#      KEEP=1 leaves the run's state dirs in place (always kept when the run fails).
# Results: ~/.cache/runlet/conformance-v1.37.2/runs/<stamp>-<port base>/ (e2e/e2e.log, e2e/report.json,
# summary.txt, runlet.log and runlet-2.log, cp/logs, node-denials.txt). summary.txt ends with what the
# apiserver refused runlet's node identity over the run (target: 0 refused), read from the audit log once
# the runlets have stopped, also when the run fails. Exit status: 0 when no spec failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
conf_set
ADDONS=${ADDONS:-1}
RUNTIME=${RUNTIME:-podman}
[ "$RUNTIME" = podman ] || [ "$RUNTIME" = runc ] || die "RUNTIME=$RUNTIME: podman or runc"
AGENT=${AGENT:-runlet}
[ "$AGENT" = runlet ] || [ "$AGENT" = kubelet ] || die "AGENT=$AGENT: runlet or kubelet"
[ "$AGENT" = runlet ] || RUNTIME=containerd
[ "$SET" = nodeconformance ] || [ "$ADDONS" = 1 ] || die "SET=$SET needs kube-proxy and CoreDNS: ADDONS=1"

bash "$HACK_DIR/install-deps.sh"
# gcc…bzip2: the test images (busybox from source); bind9-dnsutils: dig for the agnhost image (DNS specs)
for p in gcc libc6-dev make bzip2 python3 hostname bind9-dnsutils; do
  dpkg -s "$p" >/dev/null 2>&1 || { log "installing $p"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; }
done
bash "$HACK_DIR/cp-build.sh" >/dev/null
bash "$CONF_HACK_DIR/build.sh" >/dev/null
[ "$AGENT" = runlet ] || bash "$HACK_DIR/kubelet-build.sh" >/dev/null
bash "$CONF_HACK_DIR/images.sh"
[ "$ADDONS" != 1 ] || bash "$HACK_DIR/coredns-build.sh" >/dev/null

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
export PORT_BASE SET
# SET's list unless FOCUS or SPEC_LIST narrows it
if [ -z "${SPEC_LIST:-}" ] && [ -z "${FOCUS:-}" ]; then SPEC_LIST=$SET_LIST; fi
[ -z "${SPEC_LIST:-}" ] || { [ -f "$SPEC_LIST" ] || die "SPEC_LIST $SPEC_LIST: no such file"; SPEC_LIST=$(realpath "$SPEC_LIST"); export SPEC_LIST; }
RUN=$CONF_CACHE/runs/$(date +%Y%m%d-%H%M%S)-$PORT_BASE
export CP_DIR=$RUN/cp
PKI=$CP_DIR/pki K=("$CP_BIN_DIR/kubectl" --kubeconfig "$CP_DIR/pki/admin.kubeconfig")
# node i: name, root dir, pid file and log (suffix -2 for the second), kubelet API port, metrics port
NODES=() ROOTS=() SFX=()
for i in $(seq 0 $((SET_NODES - 1))); do
  s=; [ "$i" = 0 ] || s=-$((i + 1))
  NODES+=("$AGENT-conformance-$PORT_BASE$s") ROOTS+=("$RUN/$AGENT$s") SFX+=("$s")
done

# The apiserver refuses to proxy nodes/proxy to a loopback address: the nodes' InternalIP (and so the
# kubelet API's listen address) is the host's own address on its default route when it has one.
if [ -z "${NODE_IP:-}" ]; then
  NODE_IP=$(ip -4 -o route get 1.0.0.0 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  NODE_IP=${NODE_IP:-$(ip -4 -o addr show scope global 2>/dev/null | awk '$2 !~ /^(podman|cni|veth|runlet)/ {sub("/.*", "", $4); print $4; exit}')}
  [ -n "$NODE_IP" ] || { NODE_IP=127.0.0.1; log "warning: no non-loopback address; nodes/proxy specs will fail"; }
fi

# one kube-proxy per host: find out before anything starts (runlet's --cluster-dns depends on it)
if [ "$ADDONS" = 1 ] && ! err=$(CP_DIR=$CP_DIR bash "$HACK_DIR/kube-proxy.sh" check 2>&1); then
  [ "$SET" = nodeconformance ] || die "${err#error: }"
  log "warning: ${err#error: }"
  log "SET=nodeconformance goes on without kube-proxy and CoreDNS (as ADDONS=0)"
  ADDONS=0
fi
mkdir -p "${ROOTS[@]}"

# The registry stand-in: the specs name the test images after it (KUBE_TEST_REPO_LIST's
# promoterE2eRegistry, the e2e framework's way to a mirror), so that a spec pulling with `Always` pulls
# from it, on 127.0.0.1, as it would from registry.k8s.io. The images are also in local storage under
# those names, for the specs that pull `IfNotPresent`. distribution's registry, as runlet's e2e tests run
# it (hack/registry-build.sh).
REG_HOST=127.0.0.1:$((PORT_BASE + 500)) REG_TAGS=()
start_registry() {
  local bin conf=$RUN/registry/config.yml img dst
  bin=$(bash "$HACK_DIR/registry-build.sh")
  mkdir -p "$RUN/registry"
  printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
    "$RUN/registry/data" "$REG_HOST" >"$conf"
  setsid "$bin" serve "$conf" </dev/null >"$RUN/registry/registry.log" 2>&1 8>&- &
  echo "$!" >"$RUN/registry.pid"
  for n in $(seq 1 100); do
    (exec 3<>"/dev/tcp/${REG_HOST%:*}/${REG_HOST#*:}") 2>/dev/null && break
    kill -0 "$(cat "$RUN/registry.pid")" 2>/dev/null || { tail -20 "$RUN/registry/registry.log" >&2; die "the registry exited"; }
    [ "$n" = 100 ] && die "the registry did not answer on $REG_HOST within 10s"
    sleep 0.1
  done
  mapfile -t src < <(podman images --format '{{.Repository}}:{{.Tag}}' | grep '^registry\.k8s\.io/e2e-test-images/' | sort -u)
  log "pushing ${#src[@]} test images into the registry stand-in at $REG_HOST"
  for img in "${src[@]}"; do
    dst=$REG_HOST/e2e-test-images/${img#registry.k8s.io/e2e-test-images/}
    podman tag "$img" "$dst"
    REG_TAGS+=("$dst")
    podman push -q --tls-verify=false "$dst" >/dev/null || die "podman push $dst failed"
  done
  printf 'promoterE2eRegistry: %s/e2e-test-images\n' "$REG_HOST" >"$RUN/repo-list.yaml"
}

# node_denials: what the apiserver refused runlet's node identity over the run, from the control plane's
# audit log (test/e2e/framework/audit/nodedenials): its line printed and added to summary.txt, beside the
# specs' counts, the refusals in node-denials.txt. A refusal that stood is a right runlet used that a
# kubelet does not have: the target is 0.
# shellcheck disable=SC2317 # called from teardown, which the EXIT trap runs (shellcheck 0.9 misses it)
node_denials() {
  local out line rc=0
  [ -x "$RUN/nodedenials" ] && [ -f "$CP_DIR/logs/audit.log" ] || return 0
  out=$("$RUN/nodedenials" -agent "$AGENT" "$CP_DIR/logs" 2>&1) || rc=$?
  printf '%s\n' "$out" >"$RUN/node-denials.txt"
  line=$(head -1 <<<"$out")
  [ "$rc" != 2 ] || line="$AGENT as a node: no reading (${line#nodedenials: })"
  log "$line (target: 0 refused)"
  grep '^  refused:' <<<"$out" | head -20 >&2 || true
  echo "$line (target: 0 refused; node-denials.txt)" >>"$RUN/summary.txt"
}

RUNLET_PIDS=() WATCH_PIDS=() E2E_PID='' RC=1
# shellcheck disable=SC2317 # teardown runs from the EXIT trap (shellcheck 0.9 misses it before a final exit)
teardown() {
  trap '' INT TERM
  local i p stoppers=()
  for p in "${WATCH_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$E2E_PID" ] && kill -0 "$E2E_PID" 2>/dev/null; then
    log "interrupting the e2e run (pid $E2E_PID)"
    kill -INT "$E2E_PID" 2>/dev/null || true # ginkgo stops its parallel processes itself
    for _ in $(seq 300); do kill -0 "$E2E_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$E2E_PID" 2>/dev/null; then kill -KILL -- "-$E2E_PID" 2>/dev/null || true; fi # its own process group
  fi
  # the nodes together (each may take its grace period)
  for i in "${!NODES[@]}"; do
    if [ "$AGENT" = kubelet ]; then
      kubelet_node "$i" down &
    else
      stop_pid "runlet ${NODES[i]}" "$RUN/runlet${SFX[i]}.pid" 30 &
    fi
    stoppers+=($!)
  done
  wait "${stoppers[@]}" 2>/dev/null || true
  # the runlets' last requests are in the audit log now; the apiserver is still up
  node_denials
  # kube-proxy (by its PID file; its iptables rules go with it), then the control plane (which would
  # also stop kube-proxy first)
  CP_DIR=$CP_DIR bash "$HACK_DIR/kube-proxy.sh" down || true
  CP_DIR=$CP_DIR bash "$HACK_DIR/cp-down.sh" || true
  stop_pid registry "$RUN/registry.pid"
  # the run's names of the test images (the images keep their registry.k8s.io names)
  for t in "${REG_TAGS[@]}"; do podman untag "$t" "$t" >/dev/null 2>&1 || true; done
  for i in "${!NODES[@]}"; do
    [ "$AGENT" = runlet ] || continue
    # what the e2e namespaces left in podman (runlet labels its objects with the node name)
    local f=label=io.runlet.owner=${NODES[i]} pods ctrs
    pods=$(podman pod ps -q --filter "$f" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pods" ] || podman pod rm -f -t 0 $pods >/dev/null 2>&1 || true
    ctrs=$(podman ps -aq --filter "$f" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$ctrs" ] || podman rm -f -t 0 $ctrs >/dev/null 2>&1 || true
    remove_runc_pods "${NODES[i]}" "${ROOTS[i]}"
    remove_node_network "${NODES[i]}" "${ROOTS[i]}"
    remove_pod_cgroups "${NODES[i]}" "${ROOTS[i]}"
    # the tmpfs volumes of pods still being deleted when runlet stopped (innermost first)
    awk -v p="${ROOTS[i]}/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount "$m" || true; done
  done
  rm -rf "$CP_DIR/etcd"
  if [ "$RC" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "${ROOTS[@]}"; fi
  log "state and logs in $RUN"
}
trap 'teardown' EXIT
trap 'log "interrupted"; exit 130' INT TERM

# kubelet_node I CMD [ARG...]: hack/kubelet-node.sh for node i (its own ports: +10 per node)
# shellcheck disable=SC2317 # also called from teardown, which the EXIT trap runs
kubelet_node() {
  local i=$1; shift
  CP_DIR=$CP_DIR NODE_NAME=${NODES[i]} KUBELET_DIR=${ROOTS[i]} PORT_BASE=$((PORT_BASE + 10 * i)) NODE_IP=$NODE_IP \
    REGISTRY=$REG_HOST WATCH_PID=$$ CLUSTER_DNS=$([ "$ADDONS" != 1 ] || echo 10.0.0.10) \
    bash "$HACK_DIR/kubelet-node.sh" "$@" 8>&-
}

# runlet-pause goes beside runlet, where the runc backend looks for it
if [ "$AGENT" = kubelet ]; then
  :
elif [ -n "${RUNLET_BIN:-}" ]; then
  cp "$RUNLET_BIN" "$RUN/runlet-bin"
  pause_bin="$(dirname "$RUNLET_BIN")/runlet-pause"
  [ ! -x "$pause_bin" ] || cp "$pause_bin" "$RUN/runlet-pause"
else
  log "building runlet from $REPO_ROOT"
  ( cd "$REPO_ROOT" && go build -o "$RUN/runlet-bin" ./cmd/runlet && go build -o "$RUN/runlet-pause" ./cmd/runlet-pause )
fi
# the reader of the audit log, for the teardown's node_denials
( cd "$REPO_ROOT" && go build -o "$RUN/nodedenials" ./test/e2e/framework/audit/nodedenials ) ||
  log "warning: could not build nodedenials: the summary will have no line on runlet's refused requests"
# the control plane stops itself if this script dies without tearing it down (CP_WATCH_PID); the add-ons
# come after the nodes (below), not from cp-up.sh
CP_WATCH_PID=$$ KUBE_PROXY=0 CLUSTER_DNS=0 bash "$HACK_DIR/cp-up.sh" >/dev/null 8>&-
start_registry
if [ "$AGENT" = kubelet ]; then
  # every test image (and CoreDNS) goes from podman's storage into each node's containerd, under both
  # names, once the node is up (below)
  mapfile -t images < <(podman images --format '{{.Repository}}:{{.Tag}}' | grep -E "^(registry\.k8s\.io|$REG_HOST)/" | sort -u)
  [ "$ADDONS" != 1 ] || images+=("$(coredns_image)")
  for i in "${!NODES[@]}"; do
    kubelet_node "$i" up
    kubelet_node "$i" images "${images[@]}"
  done
elif [ "$RUNTIME" = runc ]; then
  # every test image (and CoreDNS) goes from podman's storage into each node's image store, under both
  # names: only `Always` pulls go to the registry stand-in
  mapfile -t images < <(podman images --format '{{.Repository}}:{{.Tag}}' | grep -E "^(registry\.k8s\.io|$REG_HOST)/" | sort -u)
  [ "$ADDONS" != 1 ] || images+=("$(coredns_image)")
  log "saving ${#images[@]} test images for the runc backend"
  podman save --multi-image-archive --format docker-archive -o "$RUN/images.tar" "${images[@]}" >/dev/null
  for i in "${!NODES[@]}"; do
    "$RUN/runlet-bin" image load --root-dir "${ROOTS[i]}" "$RUN/images.tar" >/dev/null
  done
  rm -f "$RUN/images.tar"
fi

# As hack/run.sh starts runlet, but untainted (e2e pods carry no toleration), reachable at NODE_IP, each
# node with its own root dir and ports (its own kubenet bridge over the podCIDR the controller-manager
# gives it).
for i in "${!NODES[@]}"; do
  [ "$AGENT" = runlet ] || break
  args=(
    --bootstrap-kubeconfig "$PKI/bootstrap.kubeconfig" --nodename "${NODES[i]}" --register-with-taints=
    --address "$NODE_IP" --node-ip "$NODE_IP" --kubelet-port $((PORT_BASE + 250 + 10 * i))
    --tls-cert-file "$PKI/runlet-serving.crt" --tls-private-key-file "$PKI/runlet-serving.key"
    --client-ca-file "$PKI/ca.crt"
    --root-dir "${ROOTS[i]}" --metrics-addr "127.0.0.1:$((PORT_BASE + 251 + 10 * i))" --log-level "${LOG_LEVEL:-info}"
    --runtime "$RUNTIME"
  )
  # ClusterFirst pods resolve through kube-dns (hack/cluster-dns.yaml's fixed Service IP)
  [ "$ADDONS" != 1 ] || args+=(--cluster-dns 10.0.0.10 --cluster-domain cluster.local)
  log_file=$RUN/runlet${SFX[i]}.log
  echo "--- $(date -Is) runlet ${args[*]}" >"$log_file"
  setsid "$RUN/runlet-bin" "${args[@]}" </dev/null >>"$log_file" 2>&1 8>&- &
  RUNLET_PIDS+=($!)
  echo "$!" >"$RUN/runlet${SFX[i]}.pid"
  # runlet stops (SIGTERM) if this script is killed without tearing down
  # shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill "$2" 2>/dev/null' \
    runlet-watchdog $$ "$!" </dev/null >/dev/null 2>&1 8>&- &
  WATCH_PIDS+=($!)
  log "runlet started (pid ${RUNLET_PIDS[i]}, node ${NODES[i]}, kubelet API $NODE_IP:$((PORT_BASE + 250 + 10 * i)), log $log_file)"
done
for i in "${!NODES[@]}"; do
  [ "$AGENT" = runlet ] || break
  node=${NODES[i]} log_file=$RUN/runlet${SFX[i]}.log
  for n in $(seq 1 600); do
    "${K[@]}" get node "$node" >/dev/null 2>&1 && break
    kill -0 "${RUNLET_PIDS[i]}" 2>/dev/null || { tail -30 "$log_file" >&2; die "runlet of node $node exited"; }
    [ "$n" = 600 ] && { tail -30 "$log_file" >&2; die "node $node was not registered within 120s"; }
    sleep 0.2
  done
  "${K[@]}" wait --for=condition=Ready "node/$node" --timeout=120s >/dev/null || { tail -30 "$log_file" >&2; die "node $node is not Ready"; }
  log "node $node is Ready"
done

if [ "$ADDONS" = 1 ]; then
  # kube-proxy after the nodes: it reads its node's IPs at start. One per host, acting for the first node
  # (both nodes have the host's address; "local" endpoints of a Local traffic policy are the first's).
  CP_DIR=$CP_DIR NODE_NAME=${NODES[0]} bash "$HACK_DIR/kube-proxy.sh" up 8>&- ||
    die "kube-proxy did not come up (log $CP_DIR/logs/kube-proxy.log; ADDONS=0 runs SET=nodeconformance without it)"
  dns_node=; [ "$AGENT" = runlet ] || dns_node=${NODES[0]}
  CP_DIR=$CP_DIR DNS_NODE=$dns_node bash "$HACK_DIR/cluster-dns.sh" up 8>&-
  if ! CP_DIR=$CP_DIR TIMEOUT=180s bash "$HACK_DIR/cluster-dns.sh" wait 8>&-; then
    "${K[@]}" -n kube-system describe pods -l k8s-app=kube-dns >&2 || true
    die "CoreDNS did not become available (runlet logs: $RUN/runlet*.log; ADDONS=0 runs SET=nodeconformance without it)"
  fi
fi

cat >"$RUN/run.env" <<EOF
SET=$SET
AGENT=$AGENT
RUNTIME=$RUNTIME
NODES="${NODES[*]}"
NODE_IP=$NODE_IP
ADDONS=$ADDONS
PROCS=${PROCS:-4}
FOCUS=${FOCUS:-}
SPEC_LIST=${SPEC_LIST:-}
RUNLET=$(cd "$REPO_ROOT" && git rev-parse --short HEAD 2>/dev/null || echo ?)$(cd "$REPO_ROOT" && git diff --quiet HEAD -- 2>/dev/null || echo +changes)
EOF
case $SET in
  nodeconformance) took="the default set takes 27-45 min on 2 cores" ;;
  pod-api) took="most of its specs are [Slow] resizes" ;;
  *) took="the full set took 47-62 min on 2 cores" ;;
esac
log "running the e2e specs (SET=$SET, PROCS=${PROCS:-4}; $took); log: $RUN/e2e/e2e.log"
setsid env KUBECONFIG="$PKI/admin.kubeconfig" OUT="$RUN/e2e" NUM_NODES="${#NODES[@]}" \
  KUBE_TEST_REPO_LIST="$RUN/repo-list.yaml" bash "$CONF_HACK_DIR/e2e.sh" </dev/null 8>&- &
E2E_PID=$!
set +e
wait "$E2E_PID"; e2e_rc=$?
set -e
E2E_PID=
log "e2e.test exited with $e2e_rc"
[ -f "$RUN/e2e/report.json" ] || { tail -30 "$RUN/e2e/e2e.log" >&2; die "no report: the suite did not run"; }
apart_name=vacuous; [ "$SET" = nodeconformance ] || apart_name=api-only
set +e
{
  echo "SET=$SET: ${#NODES[@]} $AGENT node(s) (${NODES[*]}) on $RUNTIME at $NODE_IP; kube-proxy and CoreDNS: $([ "$ADDONS" = 1 ] && echo yes || echo no)"
  python3 "$CONF_HACK_DIR/summarize.py" "$RUN/e2e/report.json" ${SPEC_LIST:+--list "$SPEC_LIST"} \
    --apart "$SET_APART" --apart-name "$apart_name"
} | tee "$RUN/summary.txt"
RC=${PIPESTATUS[0]}
set -e
exit "$RC"
