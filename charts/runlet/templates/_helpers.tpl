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
