#!/bin/bash
# kube-proxy on this host for the control plane in CP_DIR: Services as iptables rules (mode iptables;
# Debian 12's iptables is iptables-nft), so that the host and pods on runlet's bridge network reach
# ClusterIPs and NodePorts, the `kubernetes` Service (the apiserver, via HOST_IP) included.
# Usage: hack/kube-proxy.sh up|check|wait|down|status
#   up      start it (idempotent; restarted if its config changed, refused if it runs for another node)
#           and, if NODE_NAME's Node exists (else the first sync is ~30s away, see NODE_NAME), wait until
#           it has synced and programmed the kubernetes Service (KUBE_PROXY_TIMEOUT, default 60s).
#           KUBE_PROXY_WAIT=1 always waits, 0 never.
#   check   fail if another control plane's kube-proxy runs on this host (what `up` checks first)
#   wait    wait for that sync
#   down    stop it by PID, then remove its iptables rules (`kube-proxy --cleanup`)
#   status  exit 0 if it runs, print its pid
# Env:
#   CP_DIR        control plane state dir (default <repo>/.run/cp): config CP_DIR/kube-proxy.yaml,
#                 pid CP_DIR/pids/kube-proxy.pid, log CP_DIR/logs/kube-proxy.log,
#                 kubeconfig CP_DIR/pki/kube-proxy.kubeconfig (user system:kube-proxy, from cp-pki.sh)
#   NODE_NAME     the Node it acts for (hostnameOverride, default runlet): endpoints on that node are the
#                 "local" ones of externalTrafficPolicy/internalTrafficPolicy Local. kube-proxy waits up to
#                 30s at start for that Node to exist, and exits when it is deleted or its IPs change (a
#                 DaemonSet would restart it): a supervisor here restarts it, the rules stay in place meanwhile.
#   CLUSTER_CIDR  the pod network (default: CP_DIR/env's, else 10.244.0.0/16); traffic to a ClusterIP
#                 from outside it is masqueraded
#   PORT_BASE     default CP_DIR/port-base: healthz 127.0.0.1:PORT_BASE+256, metrics 127.0.0.1:PORT_BASE+249
# Only one kube-proxy can own the host's KUBE-* chains: `up` fails, naming it, if another one runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CP_DIR=$(realpath -m "${CP_DIR:-$REPO_ROOT/.run/cp}") # absolute: it is compared with other processes' paths
PKI=$CP_DIR/pki PIDS=$CP_DIR/pids LOGS=$CP_DIR/logs
CONF=$CP_DIR/kube-proxy.yaml PIDFILE=$PIDS/kube-proxy.pid LOG=$LOGS/kube-proxy.log
BIN=$CP_BIN_DIR/kube-proxy

# kube-proxy processes of this host: "PID CONFIG" per line (CONFIG is the --config it runs with)
kube_proxies() {
  local p cfg
  for p in $(pgrep -x kube-proxy || true); do
    cfg=$(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | sed -n '/^--config$/{n;p;q}' || true)
    echo "$p ${cfg:-?}"
  done
}
# The host-wide record of the CP_DIR whose kube-proxy owns the chains: it also covers the supervisor's
# restart gap, when no kube-proxy process is there to find.
LOCK_DIR=${RUNLET_LOCK_DIR:-/run/lock}
OWNER=$LOCK_DIR/runlet-kube-proxy.owner
# others: "PID CONFIG" of the kube-proxies (or a recorded owner's supervisor) not of this CP_DIR
others() {
  kube_proxies | awk -v c="$CONF" '$2 != c'
  local d
  d=$(cat "$OWNER" 2>/dev/null || true)
  if [ -n "$d" ] && [ "$d" != "$CP_DIR" ] && kill -0 "$(cat "$d/pids/kube-proxy.pid" 2>/dev/null || echo x)" 2>/dev/null; then
    echo "$(cat "$d/pids/kube-proxy.pid") $d/kube-proxy.yaml"
  fi
}
# check: fail, naming it, if another control plane's kube-proxy runs on this host
check() {
  local o
  o=$(others | sed -n 1p) # "PID CONFIG"
  [ -z "$o" ] || die "another kube-proxy already owns this host's KUBE-* iptables chains: pid ${o%% *}," \
    "config ${o#* } (control plane CP_DIR=$(dirname "${o#* }")); stop it first" \
    "(CP_DIR=$(dirname "${o#* }") hack/kube-proxy.sh down) or start this one without it"
}
mine() { kube_proxies | awk -v c="$CONF" '$2 == c {print $1}'; }
alive() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

down() {
  local had=0 p o bin=$BIN envbin
  [ -f "$PIDFILE" ] && had=1
  # --cleanup with the binary that ran (the caller of cp-down.sh may not pass the CP_BIN_DIR of cp-up.sh)
  envbin=$(sed -n 's/^export CP_BIN_DIR=//p' "$CP_DIR/env" 2>/dev/null || true)
  if [ -n "$envbin" ] && [ -x "$envbin/kube-proxy" ]; then bin=$envbin/kube-proxy; fi
  for p in $(mine); do bin=$(readlink -f "/proc/$p/exe" 2>/dev/null || echo "$bin"); done
  stop_pid kube-proxy "$PIDFILE" 10
  [ "$(cat "$OWNER" 2>/dev/null)" != "$CP_DIR" ] || rm -f "$OWNER"
  # a kube-proxy left behind by a supervisor that was SIGKILLed
  for p in $(mine); do kill "$p" 2>/dev/null || true; had=1; done
  for _ in $(seq 50); do [ -z "$(mine)" ] && break; sleep 0.1; done
  [ "$had" = 1 ] || return 0
  # kube-proxy leaves its rules when it stops (so that a restart does not interrupt traffic)
  o=$(others)
  if [ -n "$o" ]; then
    log "not removing the KUBE-* iptables chains: they belong to the kube-proxy still running ($o)"
    return 0
  fi
  [ -x "$bin" ] || { log "warning: $bin is missing: KUBE-* iptables chains not cleaned up"; return 0; }
  mkdir -p "$LOGS"
  echo "--- $(date -Is) kube-proxy --cleanup" >>"$LOG"
  if "$bin" --cleanup >>"$LOG" 2>&1; then
    log "kube-proxy's iptables rules removed"
  else
    log "warning: kube-proxy --cleanup reported errors (see $LOG)"
  fi
  # kube-proxy also makes kubelet's KUBE-FIREWALL chain (jumped to from INPUT and OUTPUT) and, kubelet
  # owning it, --cleanup only empties it: remove it when empty (a kubelet's would hold its DROP rule)
  local ipt
  for ipt in iptables ip6tables; do
    "$ipt" -w 5 -t filter -S KUBE-FIREWALL >/dev/null 2>&1 || continue
    if "$ipt" -w 5 -t filter -S KUBE-FIREWALL | grep -v '^-N ' | grep . >/dev/null; then continue; fi
    while "$ipt" -w 5 -t filter -D INPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
    while "$ipt" -w 5 -t filter -D OUTPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
    "$ipt" -w 5 -t filter -X KUBE-FIREWALL 2>/dev/null || log "warning: could not remove the $ipt chain KUBE-FIREWALL"
  done
}

port_base() {
  local b=${PORT_BASE:-$(cat "$CP_DIR/port-base" 2>/dev/null || true)}
  [ -n "$b" ] || die "no PORT_BASE and no $CP_DIR/port-base: is the control plane in $CP_DIR up?"
  echo "$b"
}

up() {
  local node=${NODE_NAME:-runlet} cidr pb hz metrics o new
  cidr=${CLUSTER_CIDR:-$(sed -n 's/^export CLUSTER_CIDR=//p' "$CP_DIR/env" 2>/dev/null || true)}
  cidr=${cidr:-10.244.0.0/16}
  pb=$(port_base)
  hz=127.0.0.1:$((pb+256)) metrics=127.0.0.1:$((pb+249))
  [ -x "$BIN" ] || die "$BIN is missing: run hack/cp-build.sh first"
  [ -f "$PKI/kube-proxy.kubeconfig" ] || die "$PKI/kube-proxy.kubeconfig is missing: start the control plane with hack/cp-up.sh"
  command -v iptables-restore >/dev/null || die "iptables is not installed (hack/install-deps.sh installs it)"
  mkdir -p "$PIDS" "$LOGS"

  # What this host allows (a container VM forbids some host tunables):
  #   conntrack 0s/0: leave nf_conntrack_max and the conntrack timeouts as they are (kube-proxy would
  #     otherwise set them host-wide)
  #   oomScoreAdj 0: its default -999 needs CAP_SYS_RESOURCE ("write /proc/self/oom_score_adj: permission denied")
  #   localhostNodePorts false: NodePorts on 127.0.0.1 would need net.ipv4.conf.all.route_localnet=1
  # verbosity 2: a few lines per rule sync (what, how long), the first thing to read when a Service fails
  new=$(cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $PKI/kube-proxy.kubeconfig
hostnameOverride: $node
mode: iptables
clusterCIDR: $cidr
healthzBindAddress: $hz
metricsBindAddress: $metrics
iptables:
  localhostNodePorts: false
logging:
  verbosity: 2
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
)
  # check-and-start under a host-wide lock: two `up`s at once must not both see "no kube-proxy"
  exec 9>"$LOCK_DIR/runlet-kube-proxy.lock"
  flock 9
  if alive; then
    if [ "$new" = "$(cat "$CONF" 2>/dev/null)" ]; then
      log "kube-proxy already running (pid $(cat "$PIDFILE"), node $node)"; return 0
    fi
    # another node's kube-proxy: taking it over would break whoever started it for that node
    o=$(sed -n 's/^hostnameOverride: //p' "$CONF" 2>/dev/null || true)
    [ "$o" = "$node" ] || die "kube-proxy of $CP_DIR already runs for node $o (pid $(cat "$PIDFILE")):" \
      "one kube-proxy per host; stop it first (CP_DIR=$CP_DIR hack/kube-proxy.sh down)"
    log "kube-proxy's config changed: restarting it"
    stop_pid kube-proxy "$PIDFILE" 10
  fi
  check
  for a in "$hz" "$metrics"; do
    if ss -Hltn "sport = :${a##*:}" 2>/dev/null | grep -q .; then
      die "port $a is in use (PORT_BASE=$pb); stop what uses it or pick another PORT_BASE"
    fi
  done
  printf '%s\n' "$new" >"$CONF"

  # kube-proxy exits when its Node is deleted or changes IPs (see the header): restart it after 1s, or
  # up to 16s when it keeps failing at once. The pid file holds this supervisor; SIGTERM to it stops
  # kube-proxy and then itself.
  local lines=0
  if [ -f "$LOG" ]; then lines=$(wc -l <"$LOG"); fi
  echo "--- $(date -Is) kube-proxy --config $CONF (node $node)" >>"$LOG"
  # shellcheck disable=SC2016 # expanded by the supervisor's bash
  setsid bash -c '
    child= sleeper= delay=1
    trap '\''kill $child $sleeper 2>/dev/null; wait $child 2>/dev/null; exit 0'\'' TERM INT
    while :; do
      t0=$SECONDS
      "$@" & child=$!
      wait $child && rc=0 || rc=$?
      if [ $((SECONDS - t0)) -lt 10 ]; then delay=$((delay < 16 ? delay * 2 : 16)); else delay=1; fi
      echo "--- $(date -Is) kube-proxy exited (status $rc); restarting it in ${delay}s"
      sleep $delay & sleeper=$!; wait $sleeper
    done' kube-proxy-supervisor "$BIN" --config "$CONF" </dev/null >>"$LOG" 2>&1 9>&- &
  echo $! >"$PIDFILE"
  echo "$CP_DIR" >"$OWNER"
  exec 9>&-

  log "kube-proxy started (pid $(cat "$PIDFILE"), node $node, cluster CIDR $cidr, healthz $hz, log $LOG)"
  # Its first sync comes at once if the Node exists, else after kube-proxy's 30s wait for it: wait for
  # it only then, unless asked (KUBE_PROXY_WAIT=1 always, 0 never; `hack/kube-proxy.sh wait` later).
  local wait=${KUBE_PROXY_WAIT:-}
  if [ -z "$wait" ]; then
    wait=0
    "$CP_BIN_DIR/kubectl" --kubeconfig "$PKI/admin.kubeconfig" get node "$node" >/dev/null 2>&1 && wait=1
    [ "$wait" = 1 ] || log "node $node is not registered yet: kube-proxy syncs in ~30s (when the node registers later, it restarts)"
  fi
  if [ "$wait" = 1 ]; then
    wait_synced || { down; die "kube-proxy did not come up"; }
  else
    sleep 2
    if tail -n +$((lines + 1)) "$LOG" | grep '^--- .* kube-proxy exited' >/dev/null; then
      tail -30 "$LOG" >&2; down; die "kube-proxy exited at start"
    fi
  fi
}

# wait_synced: until this kube-proxy has synced its rules (its metrics say so) and the kubernetes
# Service (10.0.0.1:443) is in KUBE-SERVICES; KUBE_PROXY_TIMEOUT seconds (default 60). Rules left by an
# earlier kube-proxy do not count: the metric is this process's own.
wait_synced() {
  local t=${KUBE_PROXY_TIMEOUT:-60} metrics
  metrics=127.0.0.1:$(($(port_base) + 249))
  for _ in $(seq $((t * 5))); do
    # grep without -q: reads all, so that the writer gets no SIGPIPE (pipefail)
    if curl -fsS -m 2 "http://$metrics/metrics" 2>/dev/null |
      grep '^kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} [1-9]' >/dev/null &&
      iptables -w 5 -t nat -S KUBE-SERVICES 2>/dev/null | grep '"default/kubernetes:https cluster IP"' >/dev/null; then
      log "kube-proxy synced: the kubernetes Service is in KUBE-SERVICES"
      return 0
    fi
    alive || break
    sleep 0.2
  done
  echo "kube-proxy did not program the kubernetes Service within ${t}s; tail of $LOG:" >&2
  tail -30 "$LOG" >&2
  return 1
}

case "${1:-}" in
up) up ;;
check) check ;;
wait) alive || die "kube-proxy of $CP_DIR is not running"; wait_synced ;;
down) down ;;
status) alive && cat "$PIDFILE" ;;
*) die "usage: $0 up|check|wait|down|status" ;;
esac
