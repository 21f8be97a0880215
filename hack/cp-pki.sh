#!/bin/bash
# PKI + kubeconfigs for the local control plane.
# Usage: cp-pki.sh DIR APISERVER_PORT [HOST_IP]
# Certificates are made once (kept if DIR/ca.crt exists), but for the apiserver's serving cert, which is
# made again when its addresses change (HOST_IP); kubeconfigs are rewritten every time (they embed the
# apiserver port) and all point at https://127.0.0.1:APISERVER_PORT. Files in DIR:
#   ca.{crt,key}                 cluster CA: apiserver serving, all client certs, CSR signing
#   front-proxy-ca.*, front-proxy-client.*, sa.{key,pub}
#   apiserver.*                  apiserver serving cert: 127.0.0.1, localhost, HOST_IP (the `kubernetes`
#                                Service's endpoint) and 10.0.0.1, kubernetes.default.svc... (what pods dial)
#   kube-proxy.* kube-proxy.kubeconfig  user system:kube-proxy (bound to system:node-proxier by default)
#   apiserver-kubelet-client.*   apiserver -> kubelet (runlet) client cert, group system:masters
#   admin.* admin.kubeconfig     cluster-admin (system:masters)
#   bootstrap-token              a bootstrap token, <id>.<secret> (made once; cp-up.sh stores it in the
#                                cluster, in kubeadm's group system:bootstrappers:kubeadm:default-node-token)
#   bootstrap.kubeconfig         that token: what runlet's TLS bootstrap starts from (--bootstrap-kubeconfig);
#                                it may only create node-client CSRs, and runlet then runs as system:node:<name>
#   runlet-serving.{crt,key}     serving cert for runlet's kubelet endpoint (IP:127.0.0.1, localhost)
set -euo pipefail
D=${1:?dir}; PORT=${2:?apiserver port}; HOST_IP=${3:-127.0.0.1}
SERVER=https://127.0.0.1:$PORT
mkdir -p "$D"; cd "$D"

CLIENT='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'
SERVING='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth'
# cert NAME CN ORG EXT  -> NAME.crt / NAME.key signed by CA (default ca)
cert() {
  local name=$1 cn=$2 org=$3 ext=$4 ca=${5:-ca} subj="/CN=$2"
  [ -f "$name.crt" ] && return 0
  [ -n "$org" ] && subj="/O=$org/CN=$cn"
  openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj" 2>/dev/null
  printf '%s\n' "$ext" >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial \
    -out "$name.crt" -days 3650 -extfile "$name.ext" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}
ca() { # NAME CN
  [ -f "$1.crt" ] || openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.crt" -days 3650 \
    -subj "/CN=$2" 2>/dev/null
}

ca ca runlet-local-ca
# front-proxy (requestheader) CA: fills extension-apiserver-authentication, enables aggregation
ca front-proxy-ca runlet-local-front-proxy-ca
if [ ! -f sa.key ]; then
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
fi
SANS=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc
SANS=$SANS,DNS:kubernetes.default.svc.cluster.local
[ "$HOST_IP" = 127.0.0.1 ] || SANS=$SANS,IP:$HOST_IP
# the host's address can change between runs (DHCP, another VM): then the cert no longer covers it
if [ "$(cat apiserver.sans 2>/dev/null)" != "$SANS" ]; then rm -f apiserver.crt; fi
cert apiserver kube-apiserver "" "$SERVING
subjectAltName=$SANS"
echo "$SANS" >apiserver.sans
cert admin                    kubernetes-admin               system:masters "$CLIENT"
cert kube-scheduler           system:kube-scheduler          ""             "$CLIENT"
cert kube-controller-manager  system:kube-controller-manager ""             "$CLIENT"
cert kube-proxy               system:kube-proxy              ""             "$CLIENT"
cert apiserver-kubelet-client kube-apiserver-kubelet-client  system:masters "$CLIENT"
cert front-proxy-client       front-proxy-client             ""             "$CLIENT" front-proxy-ca
cert runlet-serving           runlet                         ""             "$SERVING
subjectAltName=IP:127.0.0.1,DNS:localhost"

# kubeconfig NAME USER [CREDENTIAL] -> NAME.kubeconfig; the credential is the user's lines (default: the
# embedded certificate and key NAME.crt, NAME.key)
kubeconfig() {
  local name=$1 user=$2
  local cred=${3:-"client-certificate-data: $(base64 -w0 "$name.crt")
    client-key-data: $(base64 -w0 "$name.key")"}
  cat >"$name.kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: runlet-local
  cluster:
    server: $SERVER
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: $user
  user:
    $cred
contexts:
- name: $user@runlet-local
  context: {cluster: runlet-local, user: $user}
current-context: $user@runlet-local
EOF
  chmod 600 "$name.kubeconfig.tmp"
  mv -f "$name.kubeconfig.tmp" "$name.kubeconfig"
}
kubeconfig admin admin
kubeconfig kube-scheduler system:kube-scheduler
kubeconfig kube-controller-manager system:kube-controller-manager
kubeconfig kube-proxy system:kube-proxy
# the token is kubeadm's format, [a-z0-9]{6}.[a-z0-9]{16}; hex digits are a subset
[ -f bootstrap-token ] || echo "$(openssl rand -hex 3).$(openssl rand -hex 8)" >bootstrap-token
chmod 600 bootstrap-token
kubeconfig bootstrap kubelet-bootstrap "token: $(cat bootstrap-token)"
rm -f runlet.crt runlet.key runlet.kubeconfig
chmod 600 ./*.key
