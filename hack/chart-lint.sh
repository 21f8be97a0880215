#!/bin/bash
# The chart's part of `make lint`: helm lint --strict and helm template in every mode, the schema
# refusing bad values, and deploy/runlet.yaml agreeing with the chart (make manifests).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
HELM=${HELM:-$CP_BIN_DIR/helm}
[ -x "$HELM" ] || HELM=$(command -v helm) || die "helm not found: run hack/cp-build.sh (or set HELM)"
CHART=$REPO_ROOT/charts/runlet
KV=(--kube-version "${CP_K8S_VERSION#v}")
REMOTE_SSH=(--set mode=remote --set podman.url=ssh://core@podman-host/run/podman/podman.sock
  --set podman.ssh.identity=key --set podman.ssh.knownHosts=line)
MODES=("" "--set mode=perHost" "--set mode=remote --set podman.url=tcp://podman-host:8888" "${REMOTE_SSH[*]}"
  "--set tls.bootstrap=true --set clientCA.configMapName=ca --set tls.secretName=tls --set rbac.create=false"
  "--set network.plugin=kubenet --set network.podCIDR=10.244.0.0/24 --set network.hostPaths={/run/flannel}"
  "--set mode=perHost --set network.plugin=cni --set network.cniBinDir={/opt/cni/bin,/usr/libexec/cni}"
  "--set runtime=runc" "--set mode=perHost --set runtime=runc")
for m in "${MODES[@]}"; do
  # shellcheck disable=SC2086
  "$HELM" lint --strict "$CHART" $m >/dev/null || { "$HELM" lint --strict "$CHART" $m; die "helm lint --strict failed: ${m:-defaults}"; }
  # shellcheck disable=SC2086
  "$HELM" template lint "$CHART" "${KV[@]}" $m >/dev/null || die "helm template failed: ${m:-defaults}"
done
for bad in "kubeletPort=abc" "image.repository=" "mode=nowhere" "uninstall.pods=orphan" "metricsPort=0" \
  "network.plugin=weave" "network.podCIDR=abc" "network.hostPaths={/var/lib/cni}" "runtime=crun" \
  "runtime=runc,hostPID=false" "kubeletConfig.port=10250" 'nodeLabels.node-role\.kubernetes\.io/worker=' \
  'nodeLabels.kubernetes\.io/role=agent'; do
  if "$HELM" template lint "$CHART" "${KV[@]}" --set "$bad" >/dev/null 2>&1; then die "the chart accepted $bad"; fi
done
if ! diff -u "$REPO_ROOT/deploy/runlet.yaml" <(bash "$HACK_DIR/manifests.sh") >/dev/null; then
  diff -u "$REPO_ROOT/deploy/runlet.yaml" <(bash "$HACK_DIR/manifests.sh") | head -40 >&2
  die "deploy/runlet.yaml does not agree with the chart: run make manifests"
fi
log "chart: lint, templates in every mode, schema and deploy/runlet.yaml are fine"
