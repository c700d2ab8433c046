{{/* Name of the chart, or nameOverride. */}}
{{- define "reqgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: release-chart, or the release name when it already holds the chart name. */}}
{{- define "reqgate.fullname" -}}
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

{{- define "reqgate.gateway.fullname" -}}
{{- printf "%s-gateway" (include "reqgate.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "reqgate.core.fullname" -}}
{{- printf "%s-core" (include "reqgate.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "reqgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "reqgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "ctx" $ "component" "gateway"). */}}
{{- define "reqgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "reqgate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The image: by digest when image.digest is set (the tag is then left out: the digest alone names the
content, and a tag beside it would only mislead), else by tag. */}}
{{- define "reqgate.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "reqgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "reqgate.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding redis-url and postgres-dsn. */}}
{{- define "reqgate.secretName" -}}
{{- default (include "reqgate.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The Secret holding the account file. */}}
{{- define "reqgate.accountsSecretName" -}}
{{- default (printf "%s-accounts" (include "reqgate.fullname" .)) .Values.core.accounts.existingSecret -}}
{{- end -}}

{{- define "reqgate.hasAccounts" -}}
{{- if or .Values.core.accounts.existingSecret .Values.core.accounts.content -}}true{{- end -}}
{{- end -}}

{{/* The rendered --config file. */}}
{{- define "reqgate.configYAML" -}}
{{- toYaml .Values.config -}}
{{- end -}}

{{/* Pod-level settings shared by both workloads. */}}
{{- define "reqgate.podCommon" -}}
serviceAccountName: {{ include "reqgate.serviceAccountName" . }}
automountServiceAccountToken: false
# No service links: Kubernetes would add REQGATE_*_SERVICE_HOST variables for the reqgate-* services.
enableServiceLinks: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/*
The GOMEMLIMIT variable of one container: goMemLimitPercent of its resources.limits.memory, in bytes (what Go
reads without a unit). Not the whole limit: GOMEMLIMIT bounds only the memory the Go runtime manages, and the rest
(the pure-Go SQLite's page cache, mapped outside the runtime) counts against the container's limit too, so at
100% the kernel kills the pod before the collector has tried to stay under it. The downward API
(resourceFieldRef) can only give the whole limit, hence the computation here. Nothing is set without a memory
limit, or when extraEnv sets GOMEMLIMIT itself. Call with (dict "ctx" $ "w" .Values.gateway).
*/}}
{{- define "reqgate.goMemLimitEnv" -}}
{{- $pct := int .ctx.Values.goMemLimitPercent -}}
{{- $raw := dig "limits" "memory" "" (.w.resources | default dict) -}}
{{- $own := false -}}
{{- range .w.extraEnv }}{{ if eq .name "GOMEMLIMIT" }}{{ $own = true }}{{ end }}{{ end -}}
{{- if and $raw (gt $pct 0) (not $own) -}}
{{- $bytes := 0.0 -}}
{{- if or (kindIs "float64" $raw) (kindIs "int" $raw) (kindIs "int64" $raw) -}}
{{- $bytes = float64 $raw -}}
{{- else -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "P" 1000000000000000
      "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "Pi" 1125899906842624 -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" (toString $raw) -}}
{{- $unit := trimPrefix $num (toString $raw) -}}
{{- if or (not $num) (not (hasKey $units $unit)) -}}
{{- fail (printf "cannot read the memory limit %q for GOMEMLIMIT: write it as bytes or with Ki, Mi, Gi, Ti, k, M, G or T" (toString $raw)) -}}
{{- end -}}
{{- $bytes = mulf (float64 $num) (get $units $unit) -}}
{{- end -}}
- name: GOMEMLIMIT
  # {{ $pct }}% of the memory limit ({{ $raw }}), in bytes
  value: {{ divf (mulf $bytes $pct) 100 | int64 | quote }}
{{- end -}}
{{- end -}}

{{/*
The egress rules both NetworkPolicies add to their own: the OTLP collector of config.tracing.endpoint (its port,
to networkPolicy.tracing.to), then networkPolicy.extraEgress as written. Call with the root context.
*/}}
{{- define "reqgate.extraEgress" -}}
{{- $n := .Values.networkPolicy -}}
{{- $rules := list -}}
{{- with include "reqgate.tracingPort" . -}}
{{- $rule := dict "ports" (list (dict "port" (int .) "protocol" "TCP")) -}}
{{- with $n.tracing.to }}{{ $_ := set $rule "to" . }}{{ end -}}
{{- $rules = append $rules $rule -}}
{{- end -}}
{{- $rules = concat $rules ($n.extraEgress | default list) -}}
{{- with $rules }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* The TCP port of config.tracing.endpoint (the URL's, else 443 for https and 80 for http); empty without
tracing. */}}
{{- define "reqgate.tracingPort" -}}
{{- $ep := dig "tracing" "endpoint" "" (.Values.config | default dict) -}}
{{- if $ep -}}
{{- $u := urlParse $ep -}}
{{- if not (has $u.scheme (list "http" "https")) -}}
{{- fail (printf "config.tracing.endpoint %q: want an http:// or https:// URL (OTLP/HTTP)" $ep) -}}
{{- end -}}
{{- $port := trimPrefix ":" (regexFind ":[0-9]+$" $u.host) -}}
{{- default (ternary "443" "80" (eq $u.scheme "https")) $port -}}
{{- end -}}
{{- end -}}

{{/* The DNS egress rule of both NetworkPolicies: call with .Values.networkPolicy. */}}
{{- define "reqgate.dnsEgress" -}}
- ports:
    - {port: 53, protocol: UDP}
    - {port: 53, protocol: TCP}
  {{- with .dns.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
The admin token (adminToken.existingSecret) of both workloads: a file in a Secret volume, which the kubelet
updates in place when the Secret changes, named by REQGATE_ADMIN_TOKEN_FILE (admin.token_file). Each renders
nothing without the Secret.
*/}}
{{- define "reqgate.adminTokenEnv" -}}
{{- if .Values.adminToken.existingSecret -}}
# /purge and /debug/pprof/ need Authorization: Bearer <the token>; without it they are off on this listener.
- name: REQGATE_ADMIN_TOKEN_FILE
  value: /etc/reqgate/admin/token
{{- end -}}
{{- end -}}

{{- define "reqgate.adminTokenMount" -}}
{{- if .Values.adminToken.existingSecret -}}
- name: admin-token
  mountPath: /etc/reqgate/admin
  readOnly: true
{{- end -}}
{{- end -}}

{{- define "reqgate.adminTokenVolume" -}}
{{- if .Values.adminToken.existingSecret -}}
- name: admin-token
  secret:
    secretName: {{ .Values.adminToken.existingSecret }}
    items:
      - key: {{ .Values.adminToken.key }}
        path: token
{{- end -}}
{{- end -}}
