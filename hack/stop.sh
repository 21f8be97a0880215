#!/bin/bash
# `make stop`: stop what `make run` started, by recorded PID: runlet, then the control plane.
# Pods' containers keep running in podman or runc (a restarted runlet re-adopts them); RM_PODS=1 removes
# the nodes' pods (podman pods; runc containers, pause processes and mounts) and what their network left
# (namespaces, bridge, NAT rule). WIPE=1 also deletes the control plane's state (PKI, etcd data).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RUN_DIR=${RUN_DIR:-$REPO_ROOT/.run}
for f in "$RUN_DIR"/runlet.pid "$RUN_DIR"/runlet-[0-9].pid; do
  [ -f "$f" ] && stop_pid "runlet ($(basename "$f" .pid))" "$f" 30
done
CP_DIR=$RUN_DIR/cp WIPE=${WIPE:-0} bash "$HACK_DIR/cp-down.sh"
command -v podman >/dev/null 2>&1 || exit 0
i=0
while read -r NODE; do
  [ -n "$NODE" ] || continue
  i=$((i + 1))
  # runlet labels everything it creates in podman with io.runlet.owner=<node name>
  F=label=io.runlet.owner=$NODE
  if [ "${RM_PODS:-0}" = 1 ]; then
    pods=$(podman pod ps -q --filter "$F" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pods" ] || podman pod rm -f -t 0 $pods >/dev/null
    ctrs=$(podman ps -aq --filter "$F" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$ctrs" ] || podman rm -f -t 0 $ctrs >/dev/null
    log "removed the podman pods of node $NODE"
    # runlet was stopped first: what its pods' network left goes too (node i's state is runlet-i)
    root=$RUN_DIR/runlet; [ "$i" = 1 ] || root=$RUN_DIR/runlet-$i
    remove_runc_pods "$NODE" "$root"
    remove_node_network "$NODE" "$root"
    remove_pod_cgroups "$NODE" "$root"
  else
    n=$(podman pod ps -q --filter "$F" 2>/dev/null | wc -l)
    [ "$n" = 0 ] || log "$n podman pods of node $NODE keep running (make run re-adopts them; RM_PODS=1 make stop removes them)"
  fi
done < <(cat "$RUN_DIR/node-name" 2>/dev/null || true)
