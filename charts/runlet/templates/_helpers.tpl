{{/* Names */}}
{{- define "runlet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "runlet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "runlet.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Standard labels; selectorLabels never change over a release's life. */}}
{{- define "runlet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "runlet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "runlet.labels" -}}
helm.sh/chart: {{ include "runlet.chart" . }}
{{ include "runlet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "runlet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "runlet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "runlet.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Mode-dependent defaults */}}
{{- define "runlet.hostMode" -}}
{{- if ne .Values.mode "remote" }}true{{ end -}}
{{- end -}}

{{- define "runlet.hostNetwork" -}}
{{- if kindIs "bool" .Values.hostNetwork }}{{ .Values.hostNetwork }}{{ else }}{{ eq (include "runlet.hostMode" .) "true" }}{{ end -}}
{{- end -}}

{{- define "runlet.hostPID" -}}
{{- if kindIs "bool" .Values.hostPID }}{{ .Values.hostPID }}{{ else }}{{ include "runlet.hostNetwork" . }}{{ end -}}
{{- end -}}

{{/*
Ports: 10300+2k and 10301+2k, k = adler32(release name) mod 50, unless set. Outside 10248-10259 (the
kubelet's, kube-proxy's and the control plane's); per release, so that two releases share a host.
*/}}
{{- define "runlet.portOffset" -}}
{{- mul 2 (mod (atoi (adler32sum .Release.Name)) 50) -}}
{{- end -}}

{{- define "runlet.kubeletPort" -}}
{{- if .Values.kubeletPort }}{{ .Values.kubeletPort }}{{ else }}{{ add 10300 (include "runlet.portOffset" .) }}{{ end -}}
{{- end -}}

{{- define "runlet.metricsPort" -}}
{{- if .Values.metricsPort }}{{ .Values.metricsPort }}{{ else }}{{ add 10301 (include "runlet.portOffset" .) }}{{ end -}}
{{- end -}}

{{/*
The node's name as runlet's --nodename takes it: in perHost mode with the host node's name expanded
from the environment ($(HOST_NODE_NAME), set from spec.nodeName).
*/}}
{{- define "runlet.nodeName" -}}
{{- $base := default .Release.Name .Values.nodeName -}}
{{- if eq .Values.mode "perHost" }}{{ printf "%s-$(HOST_NODE_NAME)" $base }}{{ else }}{{ $base }}{{ end -}}
{{- end -}}

{{/* Labels every node of the release carries: the uninstall hook finds them by these. */}}
{{- define "runlet.nodeSelectorLabels" -}}
runlet.dev/name={{ include "runlet.name" . }},runlet.dev/instance={{ .Release.Name }}
{{- end -}}

{{- define "runlet.sshSecretName" -}}
{{- default (printf "%s-ssh" (include "runlet.fullname" .)) .Values.podman.ssh.existingSecret -}}
{{- end -}}

{{/* Environment every runlet container (and the uninstall hook) gets: the API address override. */}}
{{- define "runlet.apiServerEnv" -}}
{{- if .Values.apiServer.host }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ .Values.apiServer.host | quote }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ .Values.apiServer.port | quote }}
{{- end }}
{{- end -}}

{{/* Where the runlet pod (and the hook) may run. */}}
{{- define "runlet.scheduling" -}}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "runlet.restrictedSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
runlet.hostPort joins an IP (empty: every address) and a port as --metrics-addr takes them.
*/}}
{{- define "runlet.hostPort" -}}
{{- $ip := index . 0 -}}{{- $port := index . 1 -}}
{{- if contains ":" $ip }}[{{ $ip }}]:{{ $port }}{{ else }}{{ $ip }}:{{ $port }}{{ end -}}
{{- end -}}

{{/* The uninstall hook's account: never runlet's, whose token may only create node-client CSRs. */}}
{{- define "runlet.uninstallServiceAccountName" -}}
{{- default (printf "%s-uninstall" (include "runlet.fullname" .) | trunc 63 | trimSuffix "-") .Values.uninstall.serviceAccountName -}}
{{- end -}}

{{/*
Where runlet's container finds the ConfigMap's files: its KubeletConfiguration (--config) and the
bootstrap kubeconfig (--bootstrap-kubeconfig).
*/}}
{{- define "runlet.configDir" -}}/etc/runlet/config{{- end -}}

{{/*
The KubeletConfiguration runlet reads with --config: every value of the chart that has a field, then
the fields of .Values.kubeletConfig. Per-node values (the node's name, IP, root dir) stay flags, and so
do those with no field (the backend, the network plugin, the node's labels, the metrics address).
*/}}
{{- define "runlet.kubeletConfig" -}}
{{- $c := dict "apiVersion" "kubelet.config.k8s.io/v1beta1" "kind" "KubeletConfiguration" -}}
{{- $_ := set $c "port" (include "runlet.kubeletPort" . | int) -}}
{{- $_ = set $c "maxPods" (.Values.maxPods | int) -}}
{{- $taints := list -}}
{{- range prepend .Values.nodeTaints "virtual-kubelet.io/provider=runlet:NoSchedule" -}}
{{- $parts := splitList ":" . -}}
{{- $kv := regexSplit "=" (first $parts) 2 -}}
{{- $taint := dict "key" (first $kv) "effect" (last $parts) -}}
{{- if gt (len $kv) 1 }}{{ $_ = set $taint "value" (last $kv) }}{{ end -}}
{{- $taints = append $taints $taint -}}
{{- end -}}
{{- $_ = set $c "registerWithTaints" $taints -}}
{{- /* The node's client certificate, from the bootstrap, renewed before it expires. */ -}}
{{- $_ = set $c "rotateCertificates" true -}}
{{- if .Values.tls.bootstrap }}{{ $_ = set $c "serverTLSBootstrap" true }}{{ end -}}
{{- if .Values.tls.secretName -}}
{{- $_ = set $c "tlsCertFile" "/etc/runlet/tls/tls.crt" -}}
{{- $_ = set $c "tlsPrivateKeyFile" "/etc/runlet/tls/tls.key" -}}
{{- end -}}
{{- if .Values.clientCA.configMapName -}}
{{- $_ = set $c "authentication" (dict "x509" (dict "clientCAFile" "/etc/runlet/client-ca/ca.crt")) -}}
{{- end -}}
{{- if and (eq (include "runlet.hostMode" .) "true") .Values.network.podCIDR -}}
{{- $_ = set $c "podCIDR" .Values.network.podCIDR -}}
{{- end -}}
{{- $own := dict "port" "kubeletPort" "maxPods" "maxPods" "registerWithTaints" "nodeTaints" "tlsCertFile" "tls.secretName"
  "tlsPrivateKeyFile" "tls.secretName" "serverTLSBootstrap" "tls.bootstrap" "podCIDR" "network.podCIDR" -}}
{{- range $field, $value := $own -}}
{{- if hasKey $.Values.kubeletConfig $field -}}
{{- fail (printf "kubeletConfig.%s: the chart sets it from %s" $field $value) -}}
{{- end -}}
{{- end -}}
{{- if dig "authentication" "x509" "clientCAFile" "" .Values.kubeletConfig -}}
{{- fail "kubeletConfig.authentication.x509.clientCAFile: the chart sets it from clientCA.configMapName" -}}
{{- end -}}
{{- $c = merge $c (deepCopy .Values.kubeletConfig) -}}
{{- toYaml $c -}}
{{- end -}}

{{/*
runlet.checkNodeLabels refuses nodeLabels that NodeRestriction would refuse the node: under kubernetes.io
or k8s.io only the kubelet's well-known labels and the kubelet.kubernetes.io and node.kubernetes.io
namespaces (k8s.io/kubelet's IsKubeletLabel), as runlet's --node-labels check.
*/}}
{{- define "runlet.checkNodeLabels" -}}
{{- $allowed := list "kubernetes.io/hostname" "kubernetes.io/os" "kubernetes.io/arch" "beta.kubernetes.io/os" "beta.kubernetes.io/arch"
  "topology.kubernetes.io/zone" "topology.kubernetes.io/region" "failure-domain.beta.kubernetes.io/zone"
  "failure-domain.beta.kubernetes.io/region" "node.kubernetes.io/instance-type" "beta.kubernetes.io/instance-type" -}}
{{- range $key, $_ := .Values.nodeLabels -}}
{{- if contains "/" $key -}}
{{- $ns := first (splitList "/" $key) -}}
{{- $kube := or (eq $ns "kubernetes.io" "k8s.io") (hasSuffix ".kubernetes.io" $ns) (hasSuffix ".k8s.io" $ns) -}}
{{- $kubelet := or (has $key $allowed) (eq $ns "kubelet.kubernetes.io" "node.kubernetes.io") (hasSuffix ".kubelet.kubernetes.io" $ns) (hasSuffix ".node.kubernetes.io" $ns) -}}
{{- if and $kube (not $kubelet) -}}
{{- fail (printf "nodeLabels: %s: NodeRestriction lets a node set no label under kubernetes.io or k8s.io but the kubelet's (%s, and the kubelet.kubernetes.io and node.kubernetes.io namespaces); label the node with kubectl" $key (join ", " $allowed)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
