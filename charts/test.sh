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
count "$def" '^kind: Service$' 2
count "$def" '^kind: HorizontalPodAutoscaler$' 1
count "$def" '^kind: PodDisruptionBudget$' 1
count "$def" '^kind: ConfigMap$' 1
count "$def" '^kind: Secret$' 1
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
# probe PROBE PATH FILE: the first httpGet path after PROBE in FILE.
probe() { grep -A4 -E "^ +$1:\$" "$2" | grep -m1 -Eo 'path: /[a-z]+' | cut -d' ' -f2; }
# source TEMPLATE FILE: the rendered documents of one template.
source_of() { awk -v t="# Source: reqgate/templates/$1" '/^---/{p=0} $0==t{p=1} p' "$2"; }
source_of gateway-deployment.yaml "$def" >"$work/gw.yaml"
source_of core.yaml "$def" >"$work/core.yaml"
[ "$(probe startupProbe "$work/gw.yaml")" = /readyz ] || fail "gateway startupProbe is not /readyz"
[ "$(probe readinessProbe "$work/gw.yaml")" = /healthz ] || fail "gateway readinessProbe is not /healthz"
[ "$(probe livenessProbe "$work/gw.yaml")" = /healthz ] || fail "gateway livenessProbe is not /healthz"
[ "$(probe readinessProbe "$work/core.yaml")" = /readyz ] || fail "core readinessProbe is not /readyz"
[ "$(probe livenessProbe "$work/core.yaml")" = /healthz ] || fail "core livenessProbe is not /healthz"
# The gateway Deployment leaves replicas to the HPA.
awk '/^kind: Deployment$/{d=1} /^---/{d=0} d && /^  replicas:/{print}' "$def" | grep -q . && fail "gateway Deployment sets replicas while the HPA is on"

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
reject "$pr" '^ +- --db=' '^  volumeClaimTemplates:$' 'REQGATE_RATELIMIT_LOCAL_REPLICAS'

echo "kubecheck (production values)"
"$kubecheck" "$pr" || fail "kubecheck (production values)"

# The alert rules as Prometheus reads them (the PrometheusRule's spec is a rule file), checked and unit-tested
# with promtool (built like helm, by .ci/promtool) against alerts_test.yaml: ReqgateServerErrors fires on a 10%
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

if [ "$fails" -gt 0 ]; then
  echo "charts/test.sh: $fails failure(s)" >&2
  exit 1
fi
echo "charts/test.sh: ok"
