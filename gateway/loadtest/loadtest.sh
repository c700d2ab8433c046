#!/usr/bin/env bash
# Load test of the gateway (issue 4): one run on loopback with wrk, comparing
#   core      GET straight to the core
#   hit       the same GET through the gateway, answered from its cache
#   miss      the same GET through the gateway with Cache-Control: no-cache (fetched from the core, copied,
#             stored), one connection only: concurrent no-cache reads of one key would share a single flight
#   ceiling   a bare fasthttp server returning the same bytes
# at 64 connections (throughput, p50, p99) and at 1 connection (latency: the miss overhead over the core).
# Then, at 64 connections, cache hits of three more gateways in front of the same core, against the plain hit:
#   rl        a Redis-backed rate policy that never rejects (1,000,000 per 1s, private redis-server, whose CPU
#             counts as server CPU)                                                                (issue 5: >= 70%)
#   json      Accept: application/json, answered from the cached JSON form                         (issue 6: >= 90%)
#   info      the gateway with the default log settings (level info: one access-log line per request, to a file)
# each pair run back to back, twice, so that the machine's drift shows.
# Usage: gateway/loadtest/loadtest.sh [duration]   (default 10s; needs wrk and redis-server)
# PIN=1 pins the servers to CPU 0 and wrk (one thread) to CPU 1, so the load generator does not compete with
# the server under test for the same core (on this 2-core machine wrk otherwise takes about one core).
# PAIRS=N sets the rounds of the core / hit / ceiling comparison (default 5; the median is reported).
# ROUNDS=N sets the rounds of the ratio part (default 2; 0 skips it). WARMUP=3s is the load each server gets
# before any measurement.
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${1:-10s}
ROUNDS=${ROUNDS:-2}
SRV=() LOAD=() THREADS=2
if [ "${PIN:-0}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  SRV=(taskset -c 0) LOAD=(taskset -c 1) THREADS=1
fi
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
command -v wrk >/dev/null || { echo "wrk not installed (apt-get install wrk)"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server not installed (apt-get install redis-server)"; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CORE=127.0.0.1:$(free_port); GW=127.0.0.1:$(free_port); CEIL=127.0.0.1:$(free_port)
GWR=127.0.0.1:$(free_port); GWI=127.0.0.1:$(free_port); REDIS_PORT=$(free_port)
PATH_=/api2/demo/re/1
AUTH="Authorization: Basic $(printf demo:demo | base64)"

go build -o "$TMP/reqgate" ./cmd/reqgate
go build -o "$TMP/ceiling" ./gateway/loadtest/ceiling
"${SRV[@]}" "$TMP/reqgate" core --listen "$CORE" --admin-listen off --db "$TMP/core.db" \
  --accounts core/accounts/demo.yaml --set log.level=warn >"$TMP/core.log" 2>&1 & PIDS+=($!); CORE_PID=$!
"${SRV[@]}" "$TMP/reqgate" gateway --listen "$GW" --admin-listen off --upstream "http://$CORE" \
  --set log.level=warn >"$TMP/gw.log" 2>&1 & PIDS+=($!); GW_PID=$!
"${SRV[@]}" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no >"$TMP/redis.log" 2>&1 & PIDS+=($!); REDIS_PID=$!
cat >"$TMP/rl.yaml" <<'YAML'
ratelimit:
  policies:
    - name: never
      key: api_key
      limit: 1000000
      period: 1s
YAML
for _ in $(seq 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
"${SRV[@]}" "$TMP/reqgate" gateway --listen "$GWR" --admin-listen off --upstream "http://$CORE" --config "$TMP/rl.yaml" \
  --redis "redis://127.0.0.1:$REDIS_PORT/0" --set log.level=warn >"$TMP/gwr.log" 2>&1 & PIDS+=($!); GWR_PID=$!
"${SRV[@]}" "$TMP/reqgate" gateway --listen "$GWI" --admin-listen off --upstream "http://$CORE" \
  >"$TMP/gwi.log" 2>&1 & PIDS+=($!); GWI_PID=$!
for addr in "$CORE" "$GW" "$GWR" "$GWI"; do
  for _ in $(seq 100); do curl -sf "http://$addr/readyz" >/dev/null && break; sleep 0.1; done
done
"${SRV[@]}" "$TMP/ceiling" -listen "$CEIL" -from "http://$CORE$PATH_" -auth "${AUTH#Authorization: }" >"$TMP/ceil.log" 2>&1 & PIDS+=($!); CEIL_PID=$!
for _ in $(seq 100); do curl -sf "http://$CEIL/" >/dev/null && break; sleep 0.1; done
# Verify the credential at each gateway and fill its cache (the JSON form too).
for addr in "$GW" "$GWR" "$GWI"; do
  for _ in 1 2 3; do curl -sf -u demo:demo "http://$addr$PATH_" >/dev/null; done
  [ "$(curl -s -o /dev/null -w '%header{x-cache}' -u demo:demo "http://$addr$PATH_")" = HIT ] || { echo "gateway $addr does not hit"; exit 1; }
done
for _ in 1 2 3; do curl -sf -u demo:demo -H 'Accept: application/json' "http://$GW$PATH_" >/dev/null; done
[ "$(curl -s -o /dev/null -w '%header{x-cache}' -u demo:demo -H 'Accept: application/json' "http://$GW$PATH_")" = HIT ] ||
  { echo "gateway does not hit JSON"; exit 1; }

# cpu_ticks PID...: user+system CPU ticks of the processes so far (1/100 s each).
cpu_ticks() { local t=0 p; for p in "$@"; do t=$(( t + $(awk '{print $14+$15}' "/proc/$p/stat") )); done; echo "$t"; }

run() { # name conns url "pids serving" [wrk args]
  local name=$1 conns=$2 url=$3 pids=$4; shift 4
  local before after out
  before=$(cpu_ticks $pids)
  out=$("${LOAD[@]}" wrk -t"$(( conns < THREADS ? conns : THREADS ))" -c"$conns" -d"$DUR" --latency -H "$AUTH" "$@" "$url")
  after=$(cpu_ticks $pids)
  local rps p50 p99 n per
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out"); p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  per=$(awk -v n="$n" -v t="$(( after - before ))" 'BEGIN { if (t > 0) printf "%.0f", n / (t / 100); else print "-" }')
  if grep -q "Non-2xx" <<<"$out"; then echo "$name: non-2xx responses"; grep Non-2xx <<<"$out"; fi
  RPS=$rps PER=$per P99=$p99
  printf '%-8s c=%-3s %10s req/s   p50 %-9s p99 %-9s  %8s req per server CPU-second\n' "$name" "$conns" "$rps" "$p50" "$p99" "$per"
}
# Warm-up: a few seconds of load on each server first, so no measurement includes a process's first
# seconds (heap growth, the runtime's first GC cycles, connection set-up).
for url in "http://$CORE$PATH_" "http://$GW$PATH_" "http://$CEIL$PATH_" "http://$GWR$PATH_" "http://$GWI$PATH_"; do
  "${LOAD[@]}" wrk -t"$THREADS" -c64 -d"${WARMUP:-3s}" -H "$AUTH" "$url" >/dev/null
done
"${LOAD[@]}" wrk -t"$THREADS" -c64 -d"${WARMUP:-3s}" -H "$AUTH" -H "Accept: application/json" "http://$GW$PATH_" >/dev/null
echo "wrk -t$THREADS -d$DUR${LOAD:+ (pinned: servers on CPU 0, wrk on CPU 1)}, GET $PATH_ ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
# The machine's speed drifts from one second to the next (a shared VM), so the core/hit/ceiling comparison
# is made PAIRS times back to back, each round giving its own ratios, and the median of the rounds is the
# figure reported.
HITR=() CEILR=() HITP99=()
for pair in $(seq "${PAIRS:-5}"); do
  run core    64 "http://$CORE$PATH_" "$CORE_PID"; C=$RPS
  run hit     64 "http://$GW$PATH_"   "$GW_PID $CORE_PID"; H=$RPS HP=$P99
  run ceiling 64 "http://$CEIL$PATH_" "$CEIL_PID"; E=$RPS
  HITR+=("$(awk -v a="$H" -v b="$C" 'BEGIN { printf "%.2f", a / b }')")
  CEILR+=("$(awk -v a="$H" -v b="$E" 'BEGIN { printf "%.0f", 100 * a / b }')")
  HITP99+=("$HP")
  echo "  round $pair: hit / core ${HITR[-1]}x, hit / ceiling ${CEILR[-1]}%, hit p99 $HP"
done
median() { printf '%s\n' "$@" | sed -e 's/us$/e-3/' -e 's/ms$//' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "median of ${#HITR[@]} rounds: hit / core $(median "${HITR[@]}")x, hit / ceiling $(median "${CEILR[@]}")%, hit p99 $(median "${HITP99[@]}") ms"
run core     1 "http://$CORE$PATH_" "$CORE_PID"
run miss     1 "http://$GW$PATH_"   "$GW_PID $CORE_PID" -H "Cache-Control: no-cache"
run hit      1 "http://$GW$PATH_"   "$GW_PID $CORE_PID"

# ratio NAME A B CPU_A CPU_B: A/B of two req/s figures and of their requests per server CPU-second, as percentages.
ratio() {
  awk -v n="$1" -v a="$2" -v b="$3" -v ca="$4" -v cb="$5" \
    'BEGIN { printf "  %-30s req/s %5.1f%% (%s / %s)   per CPU-second %5.1f%% (%s / %s)\n", n, 100*a/b, a, b, 100*ca/cb, ca, cb }'
}
for round in $(seq "$ROUNDS"); do
  echo "round $round, cache hits at 64 connections:"
  run hit 64 "http://$GW$PATH_" "$GW_PID $CORE_PID"; HIT=$RPS HITC=$PER
  run rl 64 "http://$GWR$PATH_" "$GWR_PID $CORE_PID $REDIS_PID"; RL=$RPS RLC=$PER
  run json 64 "http://$GW$PATH_" "$GW_PID $CORE_PID" -H "Accept: application/json"; JSON=$RPS JSONC=$PER
  run info 64 "http://$GWI$PATH_" "$GWI_PID $CORE_PID"; INFO=$RPS INFOC=$PER
  ratio "redis rate policy / no limit" "$RL" "$HIT" "$RLC" "$HITC"
  ratio "json hit / xml hit" "$JSON" "$HIT" "$JSONC" "$HITC"
  ratio "log level info / warn" "$INFO" "$HIT" "$INFOC" "$HITC"
done
echo "access log lines written at info: $(wc -l <"$TMP/gwi.log")"
