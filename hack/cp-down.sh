#!/bin/bash
# Stop the control plane started by cp-up.sh, by recorded PID only, in reverse order (kube-proxy first,
# whose iptables rules go with it).
# Env: CP_DIR (default <repo>/.run/cp); WIPE=1 also deletes CP_DIR (PKI and etcd data).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CP_DIR=${CP_DIR:-$REPO_ROOT/.run/cp}
# the watchdog first, so it does not race us (unless we are the watchdog: it execs this script)
if [ "$(cat "$CP_DIR/pids/watchdog.pid" 2>/dev/null)" = "$$" ]; then rm -f "$CP_DIR/pids/watchdog.pid"; fi
stop_pid watchdog "$CP_DIR/pids/watchdog.pid" 1 2>/dev/null
# kube-proxy first, while the apiserver still answers; it also removes kube-proxy's iptables rules
CP_DIR="$CP_DIR" bash "$HACK_DIR/kube-proxy.sh" down || true
for n in kube-controller-manager kube-scheduler kube-apiserver etcd; do
  stop_pid "$n" "$CP_DIR/pids/$n.pid" 10
done
if [ "${WIPE:-0}" = 1 ]; then rm -rf "$CP_DIR"; log "removed $CP_DIR"; fi
exit 0
