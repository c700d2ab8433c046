#!/usr/bin/env bash
# Lints and renders charts/reqgate with the default values and with ci/production-values.yaml, decodes every
# rendered object strictly into the Kubernetes API types (charts/kubecheck, a module of its own), checks a few
# rendered facts, and checks and unit-tests the alert rules with promtool. Helm comes from the Go module proxy
# (built once, outside the main module, then cached); set HELM=/path/to/helm to use another binary, and PROMTOOL
# likewise. Called by `make test`.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v3.22.0}
KUBE_VERSION=${KUBE_VERSION:-1.31.0} # a helm built by `go install` defaults to Kubernetes 1.20 for --kube-version
here=$(cd "$(dirname "$0")" && pwd)
version=$(cat "$here/../VERSION") # the release: the image tag the chart deploys by default
chart=$here/reqgate
prod=$chart/ci/production-values.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "${HELM:-}" ]; then
  bindir=${XDG_CACHE_HOME:-$HOME/.cache}/reqgate/helm-$HELM_VERSION
  HELM=$bindir/helm
  if [ ! -x "$HELM" ]; then
    echo "building helm $HELM_VERSION (first run only)"
    mkdir -p "$bindir"
    # From an empty directory so the main module's go.mod is never read or touched.
    (cd "$work" && GOWORK=off GOFLAGS=-buildvcs=false GOBIN=$bindir go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
  fi
fi

# kubecheck (a module of its own, never part of the main module) decodes the rendered manifests strictly into
# k8s.io/api types: a misspelt field fails here, where helm lint lets it through.
kubecheck=$work/kubecheck
(cd "$here/kubecheck" && GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" go build -o "$kubecheck" .)

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect FILE PATTERN...: every extended regexp must match a line of FILE.
expect() {
  local file=$1; shift
  for pat in "$@"; do
    grep -Eq -- "$pat" "$file" || fail "$(basename "$file"): no line matches /$pat/"
  done
}
# reject FILE PATTERN...: no line may match.
reject() {
  local file=$1; shift
  for pat in "$@"; do
    if grep -Eq -- "$pat" "$file"; then fail "$(basename "$file"): unexpected /$pat/"; fi
  done
}
# count FILE PATTERN N: exactly N lines match.
count() {
  local n
  n=$(grep -Ec -- "$2" "$1" || true)
  [ "$n" = "$3" ] || fail "$(basename "$1"): /$2/ matched $n lines, want $3"
}

echo "helm lint"
"$HELM" lint --strict "$chart" --kube-version "$KUBE_VERSION" >"$work/lint-default.txt" 2>&1 || { cat "$work/lint-default.txt"; fail "lint (default values)"; }
"$HELM" lint --strict "$chart" -f "$prod" --kube-version "$KUBE_VERSION" >"$work/lint-prod.txt" 2>&1 || { cat "$work/lint-prod.txt"; fail "lint (production values)"; }

echo "helm template (default values)"
def=$work/default.yaml
"$HELM" template rg "$chart" --namespace apps --kube-version "$KUBE_VERSION" >"$def"
count "$def" '^kind: Deployment$' 1
count "$def" '^kind: StatefulSet$' 1
count "$def" '^kind: Service$' 4 # the gateway's public one, the core's, and one admin Service for each
count "$def" '^kind: HorizontalPodAutoscaler$' 1
count "$def" '^kind: PodDisruptionBudget$' 1
count "$def" '^kind: ConfigMap$' 1
count "$def" '^kind: Secret$' 0 # nothing to keep: REQGATE_REDIS_URL is an optional key of an absent Secret
count "$def" '^kind: ServiceMonitor$' 0
expect "$def" \
  '^ +- gateway$' '^ +- core$' \
  '^ +- --upstream=http://rg-reqgate-core:8081$' \
  '^ +- --listen=:8080$' '^ +- --listen=:8081$' '^ +- --admin-listen=:9090$' \
  '^ +- --config=/etc/reqgate/config/config.yaml$' \
  '^ +- --db=/var/lib/reqgate/reqgate.db$' \
  '^ +path: /readyz$' '^ +path: /healthz$' '^ +port: admin$' '^ +startupProbe:$' \
  '^ +runAsNonRoot: true$' '^ +runAsUser: 65532$' '^ +readOnlyRootFilesystem: true$' '^ +allowPrivilegeEscalation: false$' \
  '^ +- name: REQGATE_REDIS_URL$' '^ +key: redis-url$' '^ +optional: true$' \
  '^  volumeClaimTemplates:$' '^ +storage: 5Gi$' \
  '^  config.yaml: \|$' '^ +on_redis_error: local$' '^ +max_bytes: 256MiB$' \
  '^  minReplicas: 2$' '^  maxReplicas: 10$' '^  maxUnavailable: 1$' \
  "^ +image: ghcr.io/reqgate/reqgate:${version//./\\.}\$" '^ +enableServiceLinks: false$' \
  '^ +- name: REQGATE_RATELIMIT_LOCAL_REPLICAS$' '^ +value: "2"$'
reject "$def" '^ +- name: REQGATE_DB$' '^ +- --accounts' '^  replicas: 2$' 'externalTrafficPolicy'
reject "$def" 'REQGATE_ADMIN_TOKEN_FILE' 'admin-token' 'pprof: true'
# probe PROBE PATH FILE: the first httpGet path after PROBE in FILE.
probe() { grep -A4 -E "^ +$1:\$" "$2" | grep -m1 -Eo 'path: /[^ ]+' | cut -d' ' -f2; }
# source TEMPLATE FILE: the rendered documents of one template.
source_of() { awk -v t="# Source: reqgate/templates/$1" '/^---/{p=0} $0==t{p=1} p' "$2"; }
source_of gateway-deployment.yaml "$def" >"$work/gw.yaml"
source_of core.yaml "$def" >"$work/core.yaml"
# The start is gated on the core only: a gateway started while Redis is down serves on its fallback
# (cmd/reqgate's TestReadyzExcludeRedis), where a probe that waited for Redis would restart it until Redis is back.
[ "$(probe startupProbe "$work/gw.yaml")" = '/readyz?exclude=redis' ] || fail "gateway startupProbe is not /readyz?exclude=redis"
[ "$(probe readinessProbe "$work/gw.yaml")" = /healthz ] || fail "gateway readinessProbe is not /healthz"
[ "$(probe livenessProbe "$work/gw.yaml")" = /healthz ] || fail "gateway livenessProbe is not /healthz"
[ "$(probe readinessProbe "$work/core.yaml")" = /readyz ] || fail "core readinessProbe is not /readyz"
[ "$(probe livenessProbe "$work/core.yaml")" = /healthz ] || fail "core livenessProbe is not /healthz"
# The core reads the gateways' Redis too (it publishes account changes there), from the same optional key.
grep -A4 -E '^ +- name: REQGATE_REDIS_URL$' "$work/core.yaml" | grep -q 'key: redis-url$' ||
  fail "core.yaml: the core does not read redis-url"
# The gateway Deployment leaves replicas to the HPA.
awk '/^kind: Deployment$/{d=1} /^---/{d=0} d && /^  replicas:/{print}' "$def" | grep -q . && fail "gateway Deployment sets replicas while the HPA is on"

# The admin port (/metrics, /purge) is on ClusterIP Services of its own, never on the gateway's public Service.
# adminsvc FILE RELEASE: checks both admin Services and the public one of a render.
adminsvc() {
  local f=$1 rel=$2 c
  doc Service "$rel-reqgate-gateway" "$f" | grep -q 'name: admin$' && fail "$(basename "$f"): the admin port is on the gateway's public Service"
  doc Service "$rel-reqgate-core" "$f" | grep -q 'name: admin$' && fail "$(basename "$f"): the admin port is on the core's Service"
  for c in gateway core; do
    doc Service "$rel-reqgate-$c-admin" "$f" >"$work/admin-svc.yaml"
    expect "$work/admin-svc.yaml" '^  type: ClusterIP$' '^    - name: admin$' '^      targetPort: admin$' \
      "^    app.kubernetes.io/component: $c\$"
    count "$work/admin-svc.yaml" '^    - name: ' 1
  done
}
# doc KIND NAME FILE: the rendered document of that kind and name.
doc() {
  awk -v k="kind: $1" -v n="  name: $2" 'function out() { if (hk && hn) printf "%s", d }
    /^---/ { out(); d = ""; hk = hn = 0; next } { d = d $0 "\n" } $0 == k { hk = 1 } $0 == n { hn = 1 } END { out() }' "$3"
}
adminsvc "$def" rg

echo "kubecheck (default values)"
"$kubecheck" "$def" || fail "kubecheck (default values)"

echo "helm template (production values)"
pr=$work/production.yaml
"$HELM" template prod "$chart" --namespace apps -f "$prod" --kube-version "$KUBE_VERSION" >"$pr"
count "$pr" '^kind: Deployment$' 2
count "$pr" '^kind: StatefulSet$' 0
count "$pr" '^kind: Secret$' 0
count "$pr" '^kind: PodDisruptionBudget$' 2
count "$pr" '^kind: ServiceMonitor$' 1
count "$pr" '^kind: PrometheusRule$' 1
count "$def" '^kind: PrometheusRule$' 0
expect "$pr" \
  '^ +image: registry.example.com/platform/reqgate:1.4.2$' \
  '^ +- name: REQGATE_DB$' '^ +key: postgres-dsn$' '^ +name: reqgate-secrets$' \
  '^ +- --accounts=/etc/reqgate/accounts/accounts.yaml$' '^ +secretName: reqgate-accounts$' \
  '^  minReplicas: 3$' '^  maxReplicas: 20$' '^  minAvailable: 2$' \
  '^  type: LoadBalancer$' '^  externalTrafficPolicy: Local$' '^ +seconds: 10$' \
  '^ +reject_status: 503$' '^ +name: per-ip$' '^ +- api_key: acme-7f3a$' \
  '^ +topologyKey: topology.kubernetes.io/zone$' '^ +local_replicas: 4$' \
  '^ +- alert: ReqgateServerErrors$' '^ +- alert: ReqgateRateLimitOnFallback$' \
  '^ +summary: "reqgate gateway: \{\{ \$value \| humanizePercentage \}\} of answers are 5xx"$' \
  '/ sum\(rate\(reqgate_gateway_requests_total\{namespace="apps"\}\[5m\]\)\) > 0.02$'
reject "$prod" 'password' # the example keeps secrets out of values
adminsvc "$pr" prod
doc Service prod-reqgate-gateway "$pr" | grep -q '^  type: LoadBalancer$' || fail "production.yaml: the public Service is not the LoadBalancer"
count "$pr" '^kind: NetworkPolicy$' 2
# The admin token from its Secret, as a file both workloads name in REQGATE_ADMIN_TOKEN_FILE.
for w in gateway-deployment.yaml core.yaml; do
  source_of "$w" "$pr" >"$work/token.yaml"
  expect "$work/token.yaml" '^ +- name: REQGATE_ADMIN_TOKEN_FILE$' '^ +value: /etc/reqgate/admin/token$' \
    '^ +mountPath: /etc/reqgate/admin$' '^ +secretName: reqgate-admin-token$' '^ +- key: token$' '^ +path: token$'
done
reject "$pr" '^ +- --db=' '^  volumeClaimTemplates:$' 'REQGATE_RATELIMIT_LOCAL_REPLICAS'

echo "kubecheck (production values)"
"$kubecheck" "$pr" || fail "kubecheck (production values)"

# The alert rules as Prometheus reads them (the PrometheusRule's spec is a rule file), checked and unit-tested
# with promtool (Debian's, by .ci/promtool) against alerts_test.yaml: ReqgateServerErrors fires on a 10%
# 5xx rate, not on 1%, and the others fire on the replica concerned only.
echo "promtool check rules, test rules (production values)"
promtool=$(bash "$here/../.ci/promtool")
source_of prometheusrule.yaml "$pr" | awk 'p; /^spec:$/{p=1}' | sed 's/^  //' >"$work/rules.yaml"
grep -q '^groups:$' "$work/rules.yaml" || fail "no rule groups in the rendered PrometheusRule"
"$promtool" check rules "$work/rules.yaml" >"$work/check-rules.txt" 2>&1 || { cat "$work/check-rules.txt"; fail "promtool check rules"; }
cp "$here/alerts_test.yaml" "$work/alerts_test.yaml"
"$promtool" test rules "$work/alerts_test.yaml" >"$work/test-rules.txt" 2>&1 || { cat "$work/test-rules.txt"; fail "promtool test rules"; }

echo "helm template (secrets from values)"
sec=$work/secrets.yaml
"$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" \
  --set secrets.redisURL='redis://:pw@redis:6379/0' --set core.store.type=postgres \
  --set secrets.postgresDSN='postgres://u:pw@db/reqgate' --set core.replicas=3 \
  --set-string core.accounts.content='accounts: []' >"$sec"
expect "$sec" "^  redis-url: \"$(printf 'redis://:pw@redis:6379/0' | base64 -w0)\"$" \
  "^  postgres-dsn: \"$(printf 'postgres://u:pw@db/reqgate' | base64 -w0)\"$" \
  "^  accounts.yaml: \"$(printf 'accounts: []' | base64 -w0)\"$" '^  replicas: 3$'
reject "$sec" 'pw@'
count "$sec" '^kind: Secret$' 2
"$kubecheck" "$sec" || fail "kubecheck (secrets and postgres)"

echo "helm template (refusals)"
refuse() {
  local want=$1; shift
  if "$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" "$@" >"$work/refused.txt" 2>&1; then
    fail "rendered with $*; want a refusal"
  elif ! grep -q -- "$want" "$work/refused.txt"; then
    cat "$work/refused.txt" >&2; fail "refusal of $* lacks \"$want\""
  fi
}
refuse 'sqlite runs exactly one core replica' --set core.replicas=2
refuse 'needs secrets.postgresDSN' --set core.store.type=postgres
refuse "value must be one of 'sqlite', 'postgres'" --set core.store.type=mysql
refuse "additional properties 'gatway' not allowed" --set gatway.replicas=3
refuse "/secrets/redisURL" --set secrets.redisURL=http://redis:6379
refuse 'minReplicas must not exceed maxReplicas' --set gateway.autoscaling.minReplicas=5 --set gateway.autoscaling.maxReplicas=2

echo "helm lint, helm template (cluster values: ingress, HTTPRoute, NetworkPolicy, dashboard)"
cluster=$chart/ci/cluster-values.yaml
"$HELM" lint --strict "$chart" -f "$cluster" --kube-version "$KUBE_VERSION" >"$work/lint-cluster.txt" 2>&1 || { cat "$work/lint-cluster.txt"; fail "lint (cluster values)"; }
cl=$work/cluster.yaml
"$HELM" template rg "$chart" --namespace apps -f "$cluster" --kube-version "$KUBE_VERSION" >"$cl"
count "$def" '^kind: (Ingress|HTTPRoute)$' 0
count "$cl" '^kind: Ingress$' 1
count "$cl" '^kind: HTTPRoute$' 1
source_of ingress.yaml "$cl" >"$work/ingress.yaml"
expect "$work/ingress.yaml" '^apiVersion: networking\.k8s\.io/v1$' '^  ingressClassName: nginx$' \
  '^    cert-manager\.io/cluster-issuer: letsencrypt$' '^    - secretName: api-example-com-tls$' \
  '^    - host: "api\.example\.com"$' '^    - host: "legacy\.example\.com"$' \
  '^          - path: /api2$' '^                name: rg-reqgate-gateway$' '^                  name: http$'
count "$work/ingress.yaml" '^            pathType: Prefix$' 3 # the first host's paths default to / (Prefix)
# kubecheck decodes the HTTPRoute into the Gateway API's own types (sigs.k8s.io/gateway-api) and checks that its
# backend is the gateway Service's port; these lines check what the values put there.
source_of httproute.yaml "$cl" >"$work/httproute.yaml"
expect "$work/httproute.yaml" '^apiVersion: gateway\.networking\.k8s\.io/v1$' \
  '^    - name: public$' '^      namespace: gateway-system$' '^      sectionName: https$' \
  '^    - "api\.example\.com"$' '^            type: PathPrefix$' '^            value: "/"$' \
  '^        - name: rg-reqgate-gateway$' '^          port: 80$'
echo "kubecheck (cluster values)"
"$kubecheck" "$cl" || fail "kubecheck (cluster values)"
refuse 'needs at least one entry in ingress.hosts' --set ingress.enabled=true
refuse 'needs httpRoute.parentRefs' --set httpRoute.enabled=true
refuse '/ingress/hosts/0/paths/0/path' --set ingress.enabled=true --set 'ingress.hosts[0].paths[0].path=api'

echo "helm template (NetworkPolicy)"
count "$def" '^kind: NetworkPolicy$' 0
count "$cl" '^kind: NetworkPolicy$' 2
doc NetworkPolicy rg-reqgate-gateway "$cl" >"$work/np-gw.yaml"
doc NetworkPolicy rg-reqgate-core "$cl" >"$work/np-core.yaml"
for f in "$work/np-gw.yaml" "$work/np-core.yaml"; do
  expect "$f" '^  policyTypes: \[Ingress, Egress\]$' '^        - \{port: 53, protocol: UDP\}$' '^        - \{port: 53, protocol: TCP\}$'
  # The admin port only from the monitoring namespace (the default of networkPolicy.admin.from).
  grep -A4 -E '^        - \{port: admin, protocol: TCP\}$' "$f" | grep -q 'kubernetes.io/metadata.name: monitoring$' ||
    fail "$(basename "$f"): the admin port is not limited to the monitoring namespace"
done
# The gateway's public port from the ingress controller's namespace, its egress to the core's port and to Redis.
grep -A4 -E '^        - \{port: http, protocol: TCP\}$' "$work/np-gw.yaml" | grep -q 'kubernetes.io/metadata.name: ingress-nginx$' ||
  fail "np-gw.yaml: the public port is not limited to networkPolicy.gateway.from"
grep -B6 -E '^        - \{port: 8081, protocol: TCP\}$' "$work/np-gw.yaml" | grep -q 'app.kubernetes.io/component: core$' ||
  fail "np-gw.yaml: no egress to the core's pods"
grep -A8 -E '^        - \{port: 6379, protocol: TCP\}$' "$work/np-gw.yaml" | grep -q 'kubernetes.io/metadata.name: data$' ||
  fail "np-gw.yaml: no egress to networkPolicy.redis.to"
# Only the gateway's pods reach the core's port; a core on SQLite reaches nothing but DNS and the gateways' Redis
# (where it publishes account changes).
grep -A6 -E '^        - \{port: http, protocol: TCP\}$' "$work/np-core.yaml" | grep -q 'app.kubernetes.io/component: gateway$' ||
  fail "np-core.yaml: the core's port is not limited to the gateway's pods"
count "$work/np-core.yaml" '^        - \{port: [0-9]+, protocol: TCP\}$' 2 # DNS and Redis
grep -A8 -E '^        - \{port: 6379, protocol: TCP\}$' "$work/np-core.yaml" | grep -q 'kubernetes.io/metadata.name: data$' ||
  fail "np-core.yaml: no egress to networkPolicy.redis.to"
# Defaults: the public port open to everyone (a rule without from), no Redis rule without a Redis URL.
"$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" --set networkPolicy.enabled=true |
  doc NetworkPolicy rg-reqgate-gateway /dev/stdin >"$work/np-default.yaml"
[ "$(grep -A1 -E '^        - \{port: http, protocol: TCP\}$' "$work/np-default.yaml" | sed -n 2p)" = '    - ports:' ] ||
  fail "np-default.yaml: the public port is not open to everyone by default"
reject "$work/np-default.yaml" 'port: 6379'
# A core on PostgreSQL reaches it on 5432, at the peers given.
npp=$work/np-postgres.yaml
"$HELM" template prod "$chart" --namespace apps -f "$prod" --kube-version "$KUBE_VERSION" --set networkPolicy.enabled=true \
  --set-json 'networkPolicy.postgres.to=[{"ipBlock":{"cidr":"10.20.0.0/24"}}]' >"$npp"
doc NetworkPolicy prod-reqgate-core "$npp" | grep -A3 -E '^        - \{port: 5432, protocol: TCP\}$' | grep -q 'cidr: 10.20.0.0/24$' ||
  fail "np-postgres.yaml: no egress to PostgreSQL at networkPolicy.postgres.to"
doc NetworkPolicy prod-reqgate-gateway "$npp" | grep -q 'port: 6379' || fail "np-postgres.yaml: no Redis rule with secrets.existingSecret"
"$kubecheck" "$npp" || fail "kubecheck (NetworkPolicy, postgres)"
refuse '/networkPolicy/postgres/to/0' --set networkPolicy.enabled=true --set-json 'networkPolicy.postgres.to=[{"cidr":"10.0.0.0/8"}]'

echo "helm template (Grafana dashboard, recording rules)"
count "$def" '^  grafana_dashboard' 0
count "$cl" '^kind: ConfigMap$' 2
source_of grafana-dashboard.yaml "$cl" >"$work/dashboard.yaml"
expect "$work/dashboard.yaml" '^  name: rg-reqgate-dashboard$' '^    grafana_dashboard: "1"$' '^    grafana_folder: reqgate$' \
  '^  reqgate.json: \|-$' '^      "uid": "reqgate",$'
# The ConfigMap holds the chart's file as it is (kubecheck has checked that it parses as JSON).
sed -n '/^  reqgate.json: |-$/,$p' "$work/dashboard.yaml" | tail -n +2 | sed 's/^    //' | cmp -s - "$chart/dashboards/reqgate.json" ||
  fail "the dashboard ConfigMap does not hold dashboards/reqgate.json unchanged"
# Every recording rule the dashboard reads is in the PrometheusRule (cmd/reqgate/dashboard_test.go checks that the
# metrics they read exist).
source_of prometheusrule.yaml "$cl" >"$work/rules.yaml"
grep -Eo '[a-z_]+:[a-z_]+:[a-z0-9_]+' "$chart/dashboards/reqgate.json" | sort -u >"$work/dashboard-records.txt"
[ -s "$work/dashboard-records.txt" ] || fail "the dashboard reads no recording rule"
while read -r rec; do
  grep -q "^        - record: $rec\$" "$work/rules.yaml" || fail "the dashboard reads $rec, which the PrometheusRule does not record"
done <"$work/dashboard-records.txt"
count "$work/rules.yaml" '^          expr: .*\{namespace="apps"\}\[5m\]\)\)$' 15 # one-line recording rules, each on its namespace
"$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" --namespace grafana-dashboards --set metrics.grafanaDashboard.enabled=true \
  --set metrics.grafanaDashboard.label=dashboards --set metrics.grafanaDashboard.labelValue=reqgate \
  --set metrics.grafanaDashboard.namespace=monitoring >"$work/dashboard-custom.yaml"
expect "$work/dashboard-custom.yaml" '^    dashboards: "reqgate"$' '^  namespace: monitoring$'

echo "helm template (image by digest)"
dig=$work/digest.yaml
digest=sha256:$(printf reqgate | sha256sum | cut -d' ' -f1)
"$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" --set image.digest="$digest" --set image.tag=9.9.9 >"$dig"
count "$dig" "^ +image: ghcr.io/reqgate/reqgate@$digest\$" 2
reject "$dig" '^ +image: .*:9\.9\.9'
refuse '/image/digest' --set image.digest=0123abcd

echo "helm template (GOMEMLIMIT)"
# 90% of the memory limit, in bytes: the gateway's 512Mi and the core's 1Gi by default.
[ "$(grep -A2 -E '^ +- name: GOMEMLIMIT$' "$work/gw.yaml" | grep -Eo '"[0-9]+"')" = '"483183820"' ] || fail "gateway GOMEMLIMIT is not 90% of 512Mi"
[ "$(grep -A2 -E '^ +- name: GOMEMLIMIT$' "$work/core.yaml" | grep -Eo '"[0-9]+"')" = '"966367641"' ] || fail "core GOMEMLIMIT is not 90% of 1Gi"
reject "$def" 'resourceFieldRef' # the downward API can only give the whole limit
# gomemlimit ARGS...: the gateway's GOMEMLIMIT value rendered with ARGS (empty when it has none).
gomemlimit() {
  "$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" "$@" | source_of gateway-deployment.yaml /dev/stdin |
    grep -A2 -E '^ +- name: GOMEMLIMIT$' | grep -Eo '"[0-9]+"' || true
}
[ "$(gomemlimit --set gateway.resources.limits.memory=1.5Gi)" = '"1449551462"' ] || fail "GOMEMLIMIT of 1.5Gi"
[ "$(gomemlimit --set gateway.resources.limits.memory=2G)" = '"1800000000"' ] || fail "GOMEMLIMIT of 2G"
[ "$(gomemlimit --set-string gateway.resources.limits.memory=600000000)" = '"540000000"' ] || fail "GOMEMLIMIT of 600000000"
[ "$(gomemlimit --set gateway.resources.limits.memory=1Gi --set goMemLimitPercent=80)" = '"858993459"' ] || fail "GOMEMLIMIT at 80%"
[ -z "$(gomemlimit --set gateway.resources.limits=null)" ] || fail "GOMEMLIMIT without a memory limit"
[ -z "$(gomemlimit --set goMemLimitPercent=0)" ] || fail "GOMEMLIMIT with goMemLimitPercent=0"
[ "$("$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" --set 'gateway.extraEnv[0].name=GOMEMLIMIT' \
  --set 'gateway.extraEnv[0].value=300MiB' | source_of gateway-deployment.yaml /dev/stdin | grep -c GOMEMLIMIT)" = 1 ] ||
  fail "extraEnv GOMEMLIMIT does not replace the chart's"
refuse 'cannot read the memory limit "1e9"' --set gateway.resources.limits.memory=1e9

echo "helm template (Kubernetes versions: the chart's kubeVersion and the newest)"
# The gateway's preStop sleep action is on by default from Kubernetes 1.30, the chart's lowest version; older
# clusters are refused at install rather than given a pod spec their API server refuses.
refuse 'chart requires kubeVersion: >=1.30.0-0' --kube-version 1.29.15
for kv in 1.30.0 1.35.0; do
  for values in "" "$prod" "$cluster"; do
    out=$work/kube-$kv-$(basename "${values:-default}").yaml
    "$HELM" template rg "$chart" --namespace apps --kube-version "$kv" ${values:+-f "$values"} >"$out" ||
      fail "render at Kubernetes $kv (${values:-default values})"
    "$kubecheck" "$out" || fail "kubecheck at Kubernetes $kv (${values:-default values})"
    source_of gateway-deployment.yaml "$out" >"$work/kube-gw.yaml"
    grep -A1 -E '^ +preStop:$' "$work/kube-gw.yaml" >"$work/kube-prestop.yaml" || true
    expect "$work/kube-prestop.yaml" '^ +sleep:$'
    reject "$work/kube-gw.yaml" '^ +exec:$' # the image has neither a shell nor a sleep program
  done
done

echo "helm template (NetworkPolicy: tracing collector, extraEgress)"
# Tracing on: both policies reach the collector's port (from the endpoint URL) at networkPolicy.tracing.to, and
# the rules of networkPolicy.extraEgress, as written.
npt=$work/np-tracing.yaml
"$HELM" template rg "$chart" --namespace apps -f "$cluster" --kube-version "$KUBE_VERSION" \
  --set config.tracing.endpoint=http://otel-collector.observability:4318 \
  --set-json 'networkPolicy.tracing.to=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"observability"}}}]' \
  --set-json 'networkPolicy.extraEgress=[{"to":[{"ipBlock":{"cidr":"10.30.0.0/16"}}],"ports":[{"port":8443,"protocol":"TCP"},{"port":9000,"endPort":9010,"protocol":"TCP"}]}]' >"$npt"
"$kubecheck" "$npt" || fail "kubecheck (NetworkPolicy, tracing and extraEgress)"
for w in gateway core; do
  doc NetworkPolicy "rg-reqgate-$w" "$npt" >"$work/np-t.yaml"
  awk '/^  egress:$/{p=1} p' "$work/np-t.yaml" >"$work/np-t-egress.yaml"
  grep -A6 -E '^ +- port: 4318$' "$work/np-t-egress.yaml" | grep -q 'kubernetes.io/metadata.name: observability$' ||
    fail "np-tracing.yaml: the $w's policy has no egress to the collector's port 4318 at networkPolicy.tracing.to"
  grep -B1 -A8 -E '^ +- port: 8443$' "$work/np-t-egress.yaml" | grep -q 'cidr: 10.30.0.0/16$' ||
    fail "np-tracing.yaml: the $w's policy lacks networkPolicy.extraEgress"
  expect "$work/np-t-egress.yaml" '^ +(- )?endPort: 9010$'
done
# No collector rule without tracing; the port of an https endpoint without one is 443.
doc NetworkPolicy rg-reqgate-gateway "$cl" | grep -q 'port: 4318' && fail "cluster.yaml: a collector rule without tracing"
"$HELM" template rg "$chart" -f "$cluster" --kube-version "$KUBE_VERSION" --set config.tracing.endpoint=https://otlp.example.com/v1/traces |
  doc NetworkPolicy rg-reqgate-core /dev/stdin | grep -q -- '- port: 443$' || fail "no egress to port 443 of an https collector"
refuse 'config.tracing.endpoint "grpc://otel:4317": want an http:// or https:// URL' -f "$cluster" --set config.tracing.endpoint=grpc://otel:4317
refuse '/networkPolicy/extraEgress/0/to/0' --set-json 'networkPolicy.extraEgress=[{"to":[{"cidr":"10.0.0.0/8"}]}]'
refuse '/networkPolicy/extraEgress/0/ports/0/protocol' --set-json 'networkPolicy.extraEgress=[{"ports":[{"port":53,"protocol":"ICMP"}]}]'
refuse '/networkPolicy/extraEgress/0' --set-json 'networkPolicy.extraEgress=[{}]'

echo "helm template (extraVolumes, extraVolumeMounts)"
vol=$work/volumes.yaml
"$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" \
  --set-json 'gateway.extraVolumes=[{"name":"tls","secret":{"secretName":"api-example-com-tls"}}]' \
  --set-json 'gateway.extraVolumeMounts=[{"name":"tls","mountPath":"/etc/reqgate/tls","readOnly":true}]' \
  --set config.server.tls_cert_file=/etc/reqgate/tls/tls.crt --set config.server.tls_key_file=/etc/reqgate/tls/tls.key \
  --set-json 'core.extraVolumes=[{"name":"more-accounts","secret":{"secretName":"reqgate-accounts-2"}}]' \
  --set-json 'core.extraVolumeMounts=[{"name":"more-accounts","mountPath":"/etc/reqgate/accounts-2","readOnly":true}]' \
  --set-json 'core.extraArgs=["--accounts=/etc/reqgate/accounts-2/accounts.yaml"]' >"$vol"
"$kubecheck" "$vol" || fail "kubecheck (extraVolumes)"
source_of gateway-deployment.yaml "$vol" >"$work/vol-gw.yaml"
source_of core.yaml "$vol" >"$work/vol-core.yaml"
expect "$work/vol-gw.yaml" '^ +- name: tls$' '^ +(- )?mountPath: /etc/reqgate/tls$' '^ +secretName: api-example-com-tls$' \
  '^ +- name: config$' '^ +mountPath: /etc/reqgate/config$' # the chart's own stay
expect "$work/vol-core.yaml" '^ +- name: more-accounts$' '^ +(- )?mountPath: /etc/reqgate/accounts-2$' \
  '^ +secretName: reqgate-accounts-2$' '^ +- "--accounts=/etc/reqgate/accounts-2/accounts.yaml"$' '^ +- name: data$' '^ +- name: tmp$'
reject "$work/vol-gw.yaml" 'more-accounts'
reject "$work/vol-core.yaml" 'api-example-com-tls'
refuse '/gateway/extraVolumeMounts/0' --set-json 'gateway.extraVolumeMounts=[{"name":"tls"}]'
# A mount without its volume renders (the schema cannot tie the two lists), and kubecheck refuses it, as the API
# server would.
"$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" \
  --set-json 'gateway.extraVolumeMounts=[{"name":"tls","mountPath":"/etc/reqgate/tls"}]' >"$work/vol-missing.yaml"
"$kubecheck" "$work/vol-missing.yaml" 2>"$work/vol-missing.txt" && fail "kubecheck passed a mount without its volume"
grep -q 'mounts volume "tls", which the pod lacks' "$work/vol-missing.txt" || fail "kubecheck: $(cat "$work/vol-missing.txt")"
refuse '/core/extraVolumes/0' --set-json 'core.extraVolumes=[{"secret":{"secretName":"x"}}]'

echo "helm template (account edits)"
# A changed account file changes the Secret only, never the core's pod template (which would restart the one
# SQLite core): the kubelet updates the mounted file and config.reload.watch applies it to the running core.
for n in 1 2; do
  "$HELM" template rg "$chart" --kube-version "$KUBE_VERSION" --set-string core.accounts.content="accounts: [$n]" >"$work/acc-$n.yaml"
  source_of core.yaml "$work/acc-$n.yaml" >"$work/acc-core-$n.yaml"
  source_of secret.yaml "$work/acc-$n.yaml" >"$work/acc-secret-$n.yaml"
done
cmp -s "$work/acc-secret-1.yaml" "$work/acc-secret-2.yaml" && fail "the account Secret does not follow core.accounts.content"
cmp -s "$work/acc-core-1.yaml" "$work/acc-core-2.yaml" ||
  { diff "$work/acc-core-1.yaml" "$work/acc-core-2.yaml" >&2 || true; fail "an account edit changes the core's pod template (a restart)"; }
expect "$work/acc-core-1.yaml" '^ +- --accounts=/etc/reqgate/accounts/accounts.yaml$' '^ +mountPath: /etc/reqgate/accounts$'
# Mounted as a directory (no subPath), which the kubelet updates in place.
reject "$work/acc-core-1.yaml" 'subPath'
source_of configmap.yaml "$def" | grep -A1 -E '^ +reload:$' | grep -qE '^ +watch: [1-9][0-9]*s$' ||
  fail "the chart's config does not set reload.watch: account edits would wait for a restart"

echo "helm test (the test Pod's script against reqgate serve, with busybox as in the Pod)"
source_of tests/read-through-gateway.yaml "$def" >"$work/test-pod.yaml"
expect "$work/test-pod.yaml" '^    helm\.sh/hook: test$' '^ +image: "busybox:1\.36\.1"$' '^ +value: "http://rg-reqgate-gateway:80"$'
# The script: the block scalar under `- |`, less its indentation.
awk '/^ +- \|$/{p=1; next} p' "$work/test-pod.yaml" | sed 's/^          //' >"$work/test-pod.sh"
grep -q 'readyz' "$work/test-pod.sh" || fail "no script in the test Pod"
mkdir -p "$work/busybox"
for applet in sh wget timeout base64 grep tr printf echo; do ln -s "$(command -v busybox)" "$work/busybox/$applet"; done
reqgate=$work/reqgate
(cd "$here/.." && go build -o "$reqgate" ./cmd/reqgate)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$reqgate" serve --listen="127.0.0.1:$port" --admin-listen=off --db="$work/serve.db" >"$work/serve.log" 2>&1 &
serve=$!
trap 'kill "$serve" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  PATH=$work/busybox timeout 1 wget -q -O - "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
# runpod NAME=VALUE...: the script with only busybox on PATH and the Pod's environment.
runpod() { env -i PATH="$work/busybox" BASE="http://127.0.0.1:$port" "$@" sh "$work/test-pod.sh" >"$work/pod.out" 2>&1; }
runpod || { cat "$work/pod.out" "$work/serve.log"; fail "helm test script without credentials"; }
grep -q '401 from the core' "$work/pod.out" || fail "helm test script without credentials: $(cat "$work/pod.out")"
runpod RECORD_PATH=/api2/demo/re/1 READ_USERNAME=demo READ_PASSWORD=demo ||
  { cat "$work/pod.out"; fail "helm test script reading the demo record"; }
grep -q 'GET /api2/demo/re/1: a record' "$work/pod.out" || fail "helm test script read no record: $(cat "$work/pod.out")"
runpod RECORD_PATH=/api2/demo/re/1 READ_USERNAME=demo READ_PASSWORD=wrong && fail "helm test script passed with a wrong password"
runpod RECORD_PATH=/api2/demo/re/999999 READ_USERNAME=demo READ_PASSWORD=demo && fail "helm test script passed on a missing record"
kill "$serve"; wait "$serve" 2>/dev/null || true
runpod && fail "helm test script passed with the gateway down"
refuse 'tests.read.existingSecret is needed' --set tests.read.path=/api2/acme/re/1

if [ "$fails" -gt 0 ]; then
  echo "charts/test.sh: $fails failure(s)" >&2
  exit 1
fi
echo "charts/test.sh: ok"
