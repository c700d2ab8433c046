#!/usr/bin/env bash
# Load test of the gateway against nginx and a bare fasthttp server, on loopback, configured like for like:
#   ceiling  a bare fasthttp server returning the record's bytes (the most any Go HTTP server can do here)
#   nginx    nginx with proxy_cache keyed on Authorization + URI, limit_req keyed on the credential (never
#            rejecting) and a buffered access log, in front of the core
#   hit      reqgate gateway at its defaults (access log at info, the credential verified, one in-process rate
#            policy that never rejects), answering from its cache
#   json     the same with Accept: application/json (the cached JSON form)
#   br       the same with Accept-Encoding: br (the entry's brotli form, made once when it was stored)
#   rl       a reqgate gateway whose rate policy lives in Redis (a private redis-server, its CPU counted)
#   core     the core alone (for the miss overhead)
# The servers alternate in rounds of wrk -t1 -c64 (PAIRS rounds, DUR each); each round prints its ratios and the
# medians of the rounds are the figures (this machine's speed drifts between seconds). CPU per request is the
# servers' user+system CPU over the requests served. Then, at 1 connection, the miss overhead over the core, and
# open-loop latency runs at half and a quarter of the measured hit rate (p50, p99, p999) with gateway/loadtest/openloop, which
# times each request from when it was due, so the load generator's own queueing does not hide a slow server
# (vegeta, tried first, could not offer that rate from one CPU).
# Usage: gateway/loadtest/loadtest.sh [duration]   (default 8s). Needs wrk, nginx and redis-server, which it
# installs with apt-get when run as root.
# PIN=1 pins the servers to CPU 0 and the load generator to CPU 1. PAIRS=N rounds (default 5).
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${1:-8s}
PAIRS=${PAIRS:-5}
SRV=() LOAD=()
if [ "${PIN:-0}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  SRV=(taskset -c 0) LOAD=(taskset -c 1)
fi
# What is missing is installed with apt-get when run as root (as .ci/deps does for the tests); else the command
# to run is printed.
need=()
for cmd in wrk nginx redis-server; do
  command -v "$cmd" >/dev/null || [ -x "/usr/sbin/$cmd" ] || need+=("$cmd")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "the load test needs ${need[*]}: apt-get install -y ${need[*]} (as root)"; exit 1
  fi
  echo "installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$TMP/nginx.pid" ] && kill "$(cat "$TMP/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true; rm -rf "$TMP"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CORE=127.0.0.1:$(free_port); GW=127.0.0.1:$(free_port); CEIL=127.0.0.1:$(free_port)
GWR=127.0.0.1:$(free_port); NGX=127.0.0.1:$(free_port); REDIS_PORT=$(free_port)
PATH_=/api2/demo/re/1
AUTH="Authorization: Basic $(printf demo:demo | base64)"

go build -o "$TMP/reqgate" ./cmd/reqgate
go build -o "$TMP/ceiling" ./gateway/loadtest/ceiling
go build -o "$TMP/openloop" ./gateway/loadtest/openloop
cat >"$TMP/policy.yaml" <<'YAML'
ratelimit:
  policies:
    - name: never
      key: api_key
      limit: 1000000
      period: 1s
YAML
"${SRV[@]}" "$TMP/reqgate" core --listen "$CORE" --admin-listen off --db "$TMP/core.db" \
  --accounts core/accounts/demo.yaml --set log.level=warn >"$TMP/core.log" 2>&1 & PIDS+=($!); CORE_PID=$!
"${SRV[@]}" "$TMP/reqgate" gateway --listen "$GW" --admin-listen off --upstream "http://$CORE" --config "$TMP/policy.yaml" \
  >"$TMP/gw.log" 2>&1 & PIDS+=($!); GW_PID=$!
"${SRV[@]}" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no >"$TMP/redis.log" 2>&1 & PIDS+=($!); REDIS_PID=$!
for _ in $(seq 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
"${SRV[@]}" "$TMP/reqgate" gateway --listen "$GWR" --admin-listen off --upstream "http://$CORE" --config "$TMP/policy.yaml" \
  --redis "redis://127.0.0.1:$REDIS_PORT/0" >"$TMP/gwr.log" 2>&1 & PIDS+=($!); GWR_PID=$!
mkdir -p "$TMP/nginx-cache"
NGINX_USER=""
[ "$(id -u)" = 0 ] && NGINX_USER="user root;" # the worker writes its cache under $TMP, which only we may enter
cat >"$TMP/nginx.conf" <<NGINX
$NGINX_USER
worker_processes 1;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log warn;
daemon on;
events { worker_connections 4096; }
http {
  access_log $TMP/nginx-access.log combined buffer=64k flush=1s;
  client_body_temp_path $TMP/nginx-body; proxy_temp_path $TMP/nginx-proxy;
  fastcgi_temp_path $TMP/nginx-fcgi; uwsgi_temp_path $TMP/nginx-uwsgi; scgi_temp_path $TMP/nginx-scgi;
  proxy_cache_path $TMP/nginx-cache levels=1:2 keys_zone=c:10m max_size=256m inactive=60s use_temp_path=off;
  limit_req_zone \$http_authorization zone=rl:10m rate=1000000r/s;
  upstream core { server $CORE; keepalive 64; }
  server {
    listen $NGX;
    location / {
      limit_req zone=rl burst=1000000 nodelay;
      proxy_cache c;
      proxy_cache_key "\$http_authorization\$request_uri";
      proxy_cache_valid 200 30s;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass http://core;
      add_header X-Cache \$upstream_cache_status;
    }
  }
}
NGINX
"${SRV[@]}" "$NGINX" -c "$TMP/nginx.conf" -p "$TMP"
for addr in "$CORE" "$GW" "$GWR"; do
  for _ in $(seq 100); do curl -sf "http://$addr/readyz" >/dev/null && break; sleep 0.1; done
done
"${SRV[@]}" "$TMP/ceiling" -listen "$CEIL" -from "http://$CORE$PATH_" -auth "${AUTH#Authorization: }" >"$TMP/ceil.log" 2>&1 & PIDS+=($!); CEIL_PID=$!
for _ in $(seq 100); do curl -sf "http://$CEIL/" >/dev/null && break; sleep 0.1; done
# Verify the credential at each gateway and fill every cache (the JSON form too).
for addr in "$GW" "$GWR" "$NGX"; do
  for _ in 1 2 3; do curl -sf -u demo:demo "http://$addr$PATH_" >/dev/null; done
  [ "$(curl -s -o /dev/null -w '%header{x-cache}' -u demo:demo "http://$addr$PATH_")" = HIT ] || { echo "$addr does not hit"; exit 1; }
done
for _ in 1 2 3; do curl -sf -u demo:demo -H 'Accept: application/json' "http://$GW$PATH_" >/dev/null; done

# cpu_ticks PID...: user+system CPU ticks of the processes so far (1/100 s each).
cpu_ticks() { local t=0 p; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$(( t + $(awk '{print $14+$15}' "/proc/$p/stat") )); done; echo "$t"; }
# steal_mark: "steal total" ticks of all CPUs so far; steal_pct MARK: the share of CPU time the hypervisor gave to
# other machines since MARK. This machine is a VM on a shared host: a round with steal above a few percent
# measured the neighbours, not the servers, and its figures are to be discarded.
steal_mark() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat; }
steal_pct() { steal_mark | awk -v s0="${1% *}" -v t0="${1#* }" '{ printf "%.1f", ($2 > t0) ? 100 * ($1 - s0) / ($2 - t0) : 0 }'; }
nginx_pids() { local m; m=$(cat "$TMP/nginx.pid"); echo "$m $(pgrep -P "$m" | tr '\n' ' ')"; }

run() { # name conns url "pids serving" [wrk args]; sets RPS, US (server CPU microseconds per request), P99
  local name=$1 conns=$2 url=$3 pids=$4; shift 4
  local before after out n mark
  before=$(cpu_ticks $pids) mark=$(steal_mark)
  out=$("${LOAD[@]}" wrk -t1 -c"$conns" -d"$DUR" --latency -H "$AUTH" "$@" "$url")
  after=$(cpu_ticks $pids) STEAL=$(steal_pct "$mark")
  RPS=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  P99=$(awk '$1=="99%" {print $2}' <<<"$out")
  US=$(awk -v n="$n" -v t="$(( after - before ))" 'BEGIN { printf "%.2f", t * 10000 / n }')
  if grep -q "Non-2xx" <<<"$out"; then echo "$name: non-2xx responses"; grep Non-2xx <<<"$out"; fi
  printf '  %-8s c=%-3s %10s req/s  p99 %-9s %6s us server CPU per request  (steal %s%%)\n' "$name" "$conns" "$RPS" "$P99" "$US" "$STEAL"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Warm-up: a few seconds of load on each server first (heap growth, first GC cycles, connection set-up).
for url in "http://$CORE$PATH_" "http://$GW$PATH_" "http://$CEIL$PATH_" "http://$GWR$PATH_" "http://$NGX$PATH_"; do
  "${LOAD[@]}" wrk -t1 -c64 -d"${WARMUP:-3s}" -H "$AUTH" "$url" >/dev/null
done
"${LOAD[@]}" wrk -t1 -c64 -d"${WARMUP:-3s}" -H "$AUTH" -H "Accept: application/json" "http://$GW$PATH_" >/dev/null
echo "wrk -t1 -c64 -d$DUR${LOAD:+ (pinned: servers on CPU 0, load on CPU 1)}, GET $PATH_ ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
R_NGX=() R_CPU=() R_RL=() R_JSON=() R_BR=() HITS=() STEALS=()
for round in $(seq "$PAIRS"); do
  echo "round $round:"
  run ceiling 64 "http://$CEIL$PATH_" "$CEIL_PID"; CR=$RPS CU=$US; STEALS+=("$STEAL")
  run nginx 64 "http://$NGX$PATH_" "$(nginx_pids)"; NR=$RPS; STEALS+=("$STEAL")
  run hit 64 "http://$GW$PATH_" "$GW_PID"; HR=$RPS HU=$US; STEALS+=("$STEAL")
  run json 64 "http://$GW$PATH_" "$GW_PID" -H "Accept: application/json"; JR=$RPS
  run br 64 "http://$GW$PATH_" "$GW_PID" -H "Accept-Encoding: br"; BR=$RPS
  run rl 64 "http://$GWR$PATH_" "$GWR_PID $REDIS_PID"; RR=$RPS
  R_NGX+=("$(pct "$HR" "$NR")"); R_CPU+=("$(awk -v a="$HU" -v b="$CU" 'BEGIN { printf "%.2f", a / b }')")
  R_RL+=("$(pct "$RR" "$HR")"); R_JSON+=("$(pct "$JR" "$HR")"); R_BR+=("$(pct "$BR" "$HR")"); HITS+=("$HR")
  echo "  hit / nginx ${R_NGX[-1]}%, hit CPU per request / ceiling's ${R_CPU[-1]}x, redis policy / hit ${R_RL[-1]}%, json / xml ${R_JSON[-1]}%, br / plain ${R_BR[-1]}%, hit / ceiling $(pct "$HR" "$CR")%"
done
echo "median of $PAIRS rounds: hit / nginx $(median "${R_NGX[@]}")% (target >= 100%), hit CPU per request / ceiling's $(median "${R_CPU[@]}")x (target <= 1.3x),"
echo "  redis policy / hit $(median "${R_RL[@]}")% (target >= 85%), json / xml $(median "${R_JSON[@]}")% (target >= 97%),"
echo "  brotli hit / plain hit $(median "${R_BR[@]}")% (target >= 90%)"
echo "  CPU stolen by the host during the ceiling, nginx and hit runs: at most $(printf '%s\n' "${STEALS[@]}" | sort -g | tail -1)% (above a few percent, rerun)"

echo "one connection (latency; the miss is a fetch from the core, copied and stored):"
run core 1 "http://$CORE$PATH_" "$CORE_PID"
run miss 1 "http://$GW$PATH_" "$GW_PID $CORE_PID" -H "Cache-Control: no-cache"
run hit 1 "http://$GW$PATH_" "$GW_PID"

# At half the median hit rate (the target's point) and, for the shape of the curve, at a quarter of it.
for div in 2 4; do
RATE=$(awk -v r="$(median "${HITS[@]}")" -v d="$div" 'BEGIN { printf "%d", r / d }')
echo "open loop: gateway/loadtest/openloop at $RATE req/s (1/$div of the median hit rate) for $DUR, 64 connections, cache hits:"
# The ceiling's figures are this machine's floor: what any server shows here at that rate.
for target in "ceiling http://$CEIL$PATH_ $CEIL_PID" "hit http://$GW$PATH_ $GW_PID" "nginx http://$NGX$PATH_ $(nginx_pids)"; do
  read -r name url pids <<<"$target"
  printf '  %-6s ' "$name"
  before=$(cpu_ticks "$CORE_PID") sbefore=$(cpu_ticks $pids) mark=$(steal_mark)
  out=$("${LOAD[@]}" "$TMP/openloop" -url "$url" -H "$AUTH" -rate "$RATE" -duration "$DUR" -conns 64); echo "$out"
  # Requests arriving one by one cost a server more CPU each than wrk's back-to-back ones (a wake-up each).
  # The core shares the servers' CPU: its CPU during the run says whether anything of it ran beside the server.
  echo "         server CPU $(awk -v t="$(( $(cpu_ticks $pids) - sbefore ))" -v n="${out%% *}" 'BEGIN { printf "%.1f", t * 10000 / n }') us per request; the core's CPU during the run: $(( ($(cpu_ticks "$CORE_PID") - before) * 10 )) ms; steal $(steal_pct "$mark")%"
done
done
echo "access log lines written at info: $(grep -c '"msg":"request"' "$TMP/gw.log" || true)"
