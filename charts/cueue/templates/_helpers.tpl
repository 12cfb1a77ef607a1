{{/* The labels Helm's objects carry, besides each object's own. */}}
{{- define "cueue.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* The Configuration, as a dict: the values' YAML with templates
expanded; internalCertManagement off with cert-manager. */}}
{{- define "cueue.config" -}}
{{- $cfg := fromYaml (tpl .Values.managerConfig.controllerManagerConfigYaml .) -}}
{{- if .Values.enableCertManager -}}
{{- $_ := set $cfg "internalCertManagement" (dict "enable" false) -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The namespaceSelector of the Job webhooks: the Configuration's
managedJobsNamespaceSelector, else kube-system and the release's namespace
left out. */}}
{{- define "cueue.jobsNamespaceSelector" -}}
{{- $cfg := fromYaml (include "cueue.config" .) -}}
{{- if hasKey $cfg "managedJobsNamespaceSelector" -}}
{{- toYaml $cfg.managedJobsNamespaceSelector -}}
{{- else -}}
{{- include "cueue.systemNamespaceSelector" . -}}
{{- end -}}
{{- end -}}

{{- define "cueue.systemNamespaceSelector" -}}
matchExpressions:
- key: kubernetes.io/metadata.name
  operator: NotIn
  values: [kube-system, {{ .Release.Namespace }}]
{{- end -}}
