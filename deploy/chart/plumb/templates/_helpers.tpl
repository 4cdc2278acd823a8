{{/*
Object names are fixed (plumb-controller, plumb-server, argocd-cm, ...), not derived from the
release name: the binary reads Argo CD's fixed ConfigMap and Secret names and its shard Leases are
named after plumb-controller, and kubectl-applied installs (deploy/install.yaml) use the same
names, so one can replace the other. One release per namespace.
*/}}

{{- define "plumb.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end -}}

{{- define "plumb.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object; call with (dict "ctx" $ "name" "plumb-server"). */}}
{{- define "plumb.labels" -}}
helm.sh/chart: {{ include "plumb.chart" .ctx }}
app.kubernetes.io/name: {{ .name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/part-of: plumb
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
{{- with .ctx.Values.global.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Selector labels: only app.kubernetes.io/name, as deploy/ selects, because a selector is
immutable and a switch between the manifests and the chart must not need a delete.
*/}}
{{- define "plumb.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
{{- end -}}

{{/* The image of a component; call with (dict "ctx" $ "component" .Values.server). */}}
{{- define "plumb.image" -}}
{{- $g := .ctx.Values.global.image -}}
{{- $c := .component.image -}}
{{- $repo := default $g.repository $c.repository -}}
{{- $tag := default (default .ctx.Chart.AppVersion $g.tag) $c.tag -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}

{{- define "plumb.imagePullPolicy" -}}
{{- default .ctx.Values.global.image.imagePullPolicy .component.image.imagePullPolicy -}}
{{- end -}}

{{- define "plumb.controller.serviceAccountName" -}}
{{- if .Values.controller.serviceAccount.create -}}
{{- .Values.controller.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.controller.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "plumb.server.serviceAccountName" -}}
{{- if .Values.server.serviceAccount.create -}}
{{- .Values.server.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.server.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether the server serves plain HTTP (configs.params."server.insecure"). */}}
{{- define "plumb.server.insecure" -}}
{{- if eq (toString (index .Values.configs.params "server.insecure")) "true" -}}true{{- end -}}
{{- end -}}

{{/*
Pod-level fields shared by the controller and the server; call with
(dict "ctx" $ "component" .Values.server "serviceAccount" "plumb-server").
*/}}
{{- define "plumb.podSpecCommon" -}}
{{- $g := .ctx.Values.global -}}
{{- $c := .component -}}
serviceAccountName: {{ .serviceAccount }}
automountServiceAccountToken: {{ $c.serviceAccount.automountServiceAccountToken }}
terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
{{- with (default $g.imagePullSecrets $c.imagePullSecrets) }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $g.securityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $g.priorityClassName $c.priorityClassName) }}
priorityClassName: {{ . }}
{{- end }}
{{- with (default $g.nodeSelector $c.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $g.tolerations $c.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The writable volumes of a read-only root file system: Git checkouts, rendered manifests and
temporary files. Call with the component.
*/}}
{{- define "plumb.cacheVolumes" -}}
{{- $dir := dict }}
{{- with .emptyDir.sizeLimit }}{{ $_ := set $dir "sizeLimit" . }}{{ end }}
- name: cache
  emptyDir: {{ toJson $dir }}
- name: home
  emptyDir: {{ toJson $dir }}
- name: tmp
  emptyDir: {{ toJson $dir }}
{{- with .volumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "plumb.cacheMounts" -}}
- name: cache
  mountPath: /var/cache/plumb
- name: home
  mountPath: /home/argocd
- name: tmp
  mountPath: /tmp
{{- with .volumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Environment of both containers: the control namespace is the Pod's (so namespaceOverride needs no
flag), the cache is the writable volume, the log level is global.logging.level.
*/}}
{{- define "plumb.commonEnv" -}}
- name: PLUMB_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: PLUMB_CACHE_DIR
  value: /var/cache/plumb
- name: PLUMB_LOG
  value: {{ .Values.global.logging.level | quote }}
# A writable home: the root file system is read-only, and tools a render runs (git, ssh, gpg,
# helm) may look under $HOME.
- name: HOME
  value: /home/argocd
- name: TMPDIR
  value: /tmp
{{- with .Values.global.env }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "plumb.probe" -}}
failureThreshold: {{ .failureThreshold }}
initialDelaySeconds: {{ .initialDelaySeconds }}
periodSeconds: {{ .periodSeconds }}
successThreshold: {{ .successThreshold }}
timeoutSeconds: {{ .timeoutSeconds }}
{{- end -}}
