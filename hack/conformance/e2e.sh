#!/bin/bash
# Run upstream e2e specs (k8s.io/kubernetes v1.37.2 test/e2e, built by build.sh) against a cluster whose
# schedulable nodes are untainted runlet nodes (one for SET=nodeconformance, two for SET=conformance).
# hack/conformance/run.sh (make conformance) calls it with everything up; it can be re-run by hand
# against the same cluster.
# Env:
#   KUBECONFIG  admin kubeconfig of the cluster (required)
#   OUT         results dir (required): e2e.log, report.json, args.txt
#   SET         nodeconformance (default): lists/nodeconformance-default.txt, 236 specs;
#               conformance: lists/conformance.txt, all 462 [Conformance] specs (see lib.sh's conf_set)
#   SPEC_LIST   file of exact spec names, one per line (# comments) -> an anchored focus
#   FOCUS       ginkgo focus regexp; with neither, SET's list. With SET=conformance only [Conformance]
#               specs run (label filter), whatever FOCUS matches
#   SKIP        ginkgo skip regexp (default for SET=nodeconformance:
#               Serial|Slow|Disruptive|Flaky|Alpha|Beta|Feature:; for SET=conformance: none)
#   NUM_NODES   schedulable nodes the specs may count on (default: SET's, 1 or 2)
#   PROCS       parallel ginkgo processes (default 4; 1 runs e2e.test directly)
#   TIMEOUT     whole-suite timeout (default 3h, SET=conformance 6h; ginkgo's own 1h is too short on 2 cores)
#   EXTRA       more e2e.test flags
#   KUBE_TEST_REPO_LIST  the e2e framework's registry list (run.sh: its registry stand-in)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
: "${KUBECONFIG:?}" "${OUT:?}"
conf_set
mkdir -p "$OUT"
SKIP=${SKIP-$SET_SKIP}
if [ -z "${SPEC_LIST:-}" ] && [ -z "${FOCUS:-}" ]; then SPEC_LIST=$SET_LIST; fi
if [ -n "${SPEC_LIST:-}" ]; then
  # exact names: escaped and anchored at the end (ginkgo matches the focus against the full spec text)
  FOCUS=$(python3 -c 'import re,sys; print("|".join(re.escape(l.strip())+"$" for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")))' "$SPEC_LIST")
fi
ARGS=(
  --kubeconfig="$KUBECONFIG"
  --provider=skeleton                 # no SSH, no cloud: SSH-only specs skip themselves
  --kubectl-path="$CP_BIN_DIR/kubectl"
  --num-nodes="${NUM_NODES:-$SET_NODES}"   # node auto-detection ignores non-blocking taints
  "--non-blocking-taints=virtual-kubelet.io/provider,node-role.kubernetes.io/control-plane"
  --allowed-not-ready-nodes=0
  --minStartupPods=0 --system-pods-startup-timeout=2m   # kube-system holds CoreDNS at most
  --node-os-distro=debian --node-os-arch=amd64
  --disable-log-dump --prepull-images=false
  --report-dir="$OUT/report"
  -ginkgo.focus="$FOCUS"
  -ginkgo.timeout="${TIMEOUT:-$SET_TIMEOUT}"
  -ginkgo.no-color -ginkgo.v -ginkgo.silence-skips
  -ginkgo.json-report="$OUT/report.json"
)
[ -n "$SKIP" ] && ARGS+=(-ginkgo.skip="$SKIP")
[ -n "$SET_LABELS" ] && ARGS+=(-ginkgo.label-filter="$SET_LABELS")
# shellcheck disable=SC2206
[ -n "${EXTRA:-}" ] && ARGS+=($EXTRA)
printf '%q ' "${ARGS[@]}" >"$OUT/args.txt"
cd "$OUT" || exit 1
PROCS=${PROCS:-4}
if [ "$PROCS" -gt 1 ]; then
  # the ginkgo CLI wants the ginkgo flags without their "ginkgo." prefix, before the binary
  GARGS=(); TARGS=()
  for a in "${ARGS[@]}"; do case $a in -ginkgo.*) GARGS+=("--${a#-ginkgo.}");; *) TARGS+=("$a");; esac; done
  exec "$CONF_BIN_DIR/ginkgo" --procs="$PROCS" "${GARGS[@]}" "$CONF_BIN_DIR/e2e.test" -- "${TARGS[@]}" >"$OUT/e2e.log" 2>&1
fi
exec "$CONF_BIN_DIR/e2e.test" "${ARGS[@]}" >"$OUT/e2e.log" 2>&1
