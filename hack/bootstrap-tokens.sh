#!/bin/bash
# TLS bootstrap for the local control plane, as kubeadm's bootstrap-token phase makes it: the bootstrap
# token of CP_DIR/pki/bootstrap-token as a Secret (no expiry: a local cluster), kubeadm's RBAC
# (hack/bootstrap-rbac.yaml), and kube-public/cluster-info, the server and CA that `runlet join`
# discovers; the controller-manager's bootstrapsigner signs it with the token (jws-kubeconfig-<id>).
# Env: CP_DIR, API_PORT, HOST_IP (cluster-info's server: https://HOST_IP:API_PORT, what another machine
# dials; 127.0.0.1 when the host has no other address).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
PKI=$CP_DIR/pki
K=("$CP_BIN_DIR/kubectl" --kubeconfig "$PKI/admin.kubeconfig")
token=$(cat "$PKI/bootstrap-token")
id=${token%%.*} secret=${token#*.}
"${K[@]}" apply -f "$HACK_DIR/bootstrap-rbac.yaml" >/dev/null
"${K[@]}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$id
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  description: runlet's local control plane
  token-id: "$id"
  token-secret: "$secret"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: system:bootstrappers:kubeadm:default-node-token
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-info
  namespace: kube-public
data:
  kubeconfig: |
    apiVersion: v1
    kind: Config
    clusters:
    - name: ""
      cluster:
        server: https://${HOST_IP:-127.0.0.1}:$API_PORT
        certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
    contexts: []
    current-context: ""
    preferences: {}
    users: []
EOF
