#!/bin/bash
# Print the `runlet join` command for a control plane of hack/cp-up.sh, as `kubeadm token create
# --print-join-command` does: the apiserver of kube-public/cluster-info, a bootstrap token, and the pin of
# the cluster CA (sha256 of its SubjectPublicKeyInfo). The token is a valid existing one of the kubeadm node
# group (kube-system, type bootstrap.kubernetes.io/token, for authentication and signing, 1 h left at
# least), or a new one that expires in 24 h.
# Usage: join-command.sh [CP_DIR]   (default $CP_DIR or <repo>/.run/cp)
# Env: KUBECONFIG_ADMIN (default CP_DIR/pki/admin.kubeconfig), CA (default CP_DIR/pki/ca.crt)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CP_DIR=${1:-${CP_DIR:-$REPO_ROOT/.run/cp}}
ADMIN=${KUBECONFIG_ADMIN:-$CP_DIR/pki/admin.kubeconfig}
CA=${CA:-$CP_DIR/pki/ca.crt}
GROUP=system:bootstrappers:kubeadm:default-node-token
[ -f "$ADMIN" ] || die "$ADMIN is missing: is the control plane in $CP_DIR up (hack/cp-up.sh)?"
[ -f "$CA" ] || die "$CA is missing"
kubectl() { "$CP_BIN_DIR/kubectl" --kubeconfig "$ADMIN" "$@"; }

hash=$(openssl x509 -pubkey -noout -in "$CA" | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1)
[ ${#hash} = 64 ] || die "could not hash the public key of $CA"

# the server nodes are told, from cluster-info's kubeconfig (hack/bootstrap-tokens.sh)
server=$(kubectl -n kube-public get configmap cluster-info -o jsonpath='{.data.kubeconfig}' |
  sed -n 's/^ *server: *//p' | head -1)
[ -n "$server" ] || die "kube-public/cluster-info has no server: was hack/bootstrap-tokens.sh applied?"

# existing tokens: "id.secret expiration usages... groups" per line
tmpl='{{range .items}}{{index .data "token-id" | base64decode}}.{{index .data "token-secret" | base64decode}}'
tmpl+=' {{with index .data "expiration"}}{{base64decode .}}{{else}}never{{end}}'
tmpl+=' {{with index .data "usage-bootstrap-authentication"}}{{base64decode .}}{{else}}-{{end}}'
tmpl+=' {{with index .data "usage-bootstrap-signing"}}{{base64decode .}}{{else}}-{{end}}'
tmpl+=' {{with index .data "auth-extra-groups"}}{{base64decode .}}{{else}}-{{end}}{{"\n"}}{{end}}'
token=
soon=$(( $(date +%s) + 3600 ))
while read -r t exp auth sign groups; do
  if [ -z "$t" ] || [ "$auth" != true ] || [ "$sign" != true ]; then continue; fi
  [[ ",$groups," == *",$GROUP,"* ]] || continue
  if [ "$exp" != never ]; then e=$(date -d "$exp" +%s 2>/dev/null) || continue; [ "$e" -gt "$soon" ] || continue; fi
  token=$t; break
done < <(kubectl -n kube-system get secrets --field-selector type=bootstrap.kubernetes.io/token -o go-template="$tmpl")

if [ -z "$token" ]; then
  id=$(openssl rand -hex 3); secret=$(openssl rand -hex 8)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$id
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  description: "runlet join (hack/join-command.sh)"
  token-id: "$id"
  token-secret: "$secret"
  expiration: "$(date -u -d '+24 hours' +%Y-%m-%dT%H:%M:%SZ)"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: "$GROUP"
YAML
  token=$id.$secret
  log "made bootstrap token $id (expires in 24 h)"
fi
echo "runlet join ${server#https://} --token $token --discovery-token-ca-cert-hash sha256:$hash"
