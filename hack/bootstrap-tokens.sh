#!/bin/bash
# Set a control plane up for bootstrap-token join (runlet join, kubeadm join), as kubeadm's
# bootstrap-token phase does: the kube-public/cluster-info ConfigMap (a kubeconfig with the server and the
# CA, which the controller-manager's bootstrapsigner signs for each signing token), its Role letting
# system:anonymous read it, and the RBAC that lets bootstrap tokens of the kubeadm group make node CSRs that
# the csrapproving controller approves. Tokens themselves come from hack/join-command.sh.
# Needs the apiserver's --enable-bootstrap-token-auth and the controllers bootstrapsigner and tokencleaner
# (hack/cp-up.sh sets them). Idempotent.
# Usage: bootstrap-tokens.sh ADMIN_KUBECONFIG CA_FILE SERVER_URL
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ADMIN=${1:?admin kubeconfig}; CA=${2:?CA file}; SERVER=${3:?apiserver URL}
kubectl() { "$CP_BIN_DIR/kubectl" --kubeconfig "$ADMIN" "$@"; }

# the kubeconfig of cluster-info: no user, the cluster unnamed, as kubeadm writes it
info=$(mktemp); trap 'rm -f "$info"' EXIT
cat >"$info" <<KC
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: $(base64 -w0 "$CA")
    server: $SERVER
  name: ""
contexts: null
current-context: ""
preferences: {}
users: null
KC
# apply, not replace: the bootstrapsigner's jws-kubeconfig-<id> keys are not in what is applied, so stay
kubectl create configmap cluster-info -n kube-public --from-file=kubeconfig="$info" --dry-run=client -o yaml |
  kubectl apply -f - >/dev/null

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kubeadm:bootstrap-signer-clusterinfo
  namespace: kube-public
rules:
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [cluster-info]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: kubeadm:bootstrap-signer-clusterinfo
  namespace: kube-public
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: kubeadm:bootstrap-signer-clusterinfo}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: system:anonymous}
---
# bootstrap tokens may make CSRs...
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kubeadm:kubelet-bootstrap
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node-bootstrapper}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:bootstrappers:kubeadm:default-node-token"}
---
# ...whose node client certificates are approved at once...
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kubeadm:node-autoapprove-bootstrap
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:bootstrappers:kubeadm:default-node-token"}
---
# ...as are the renewals nodes ask for with their own certificates
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kubeadm:node-autoapprove-certificate-rotation
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}
YAML
log "bootstrap-token join set up: kube-public/cluster-info for $SERVER, RBAC for system:bootstrappers:kubeadm:default-node-token"
