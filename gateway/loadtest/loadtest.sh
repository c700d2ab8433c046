#!/usr/bin/env bash
# Load test of the gateway against nginx, Varnish and a bare fasthttp server, on loopback, configured like for
# like:
#   ceiling  a bare fasthttp server returning the record's bytes (the most any Go HTTP server can do here)
#   busy     the same ceiling keeping the CPU busy for BUSY (default 6us, about the hit's work over the
#            ceiling's) on each request first: what any Go server as busy as the hit pays for waiting
#   nginx    nginx with proxy_cache keyed on Authorization + URI, limit_req keyed on the credential (never
#            rejecting) and a buffered access log, in front of the core; one worker per CPU the servers have
#   varnish  Varnish with its cache hashed on Authorization + URL (no rate limit: Varnish has none built in) and
#            no log of its own written to disk (varnishlog is not run), in front of the core
#   hit      reqgate gateway at its defaults (access log at info, the credential verified, one in-process rate
#            policy that never rejects), answering from its cache
#   json     the same with Accept: application/json (the cached JSON form)
#   br       the same with Accept-Encoding: br (the entry's brotli form, made once when it was stored)
#   rl       a reqgate gateway whose rate policy lives in Redis (a private redis-server, its CPU counted)
#   core     the core alone (for the miss overhead)
# Two CPU layouts, each with servers started afresh:
#   pinned    every server on CPU 0 (nginx worker_processes 1, Go's GOMAXPROCS 1 from the affinity), wrk on CPU 1
#   unpinned  nothing pinned: every server free to use every CPU (nginx one worker per CPU, reqgate at its
#             default GOMAXPROCS), and wrk free too, sharing the CPUs with the server it loads
# The servers alternate in rounds of wrk -t1 -c64 (PAIRS rounds, DUR each); each round prints its ratios and the
# medians of the rounds are the figures (this machine's speed drifts between seconds). CPU per request is the
# servers' user+system CPU over the requests served. Every run prints the host's steal and the load average.
# The unpinned layout runs ceiling, busy, nginx, varnish and hit only (json, br and rl are ratios to the hit
# that the pinned layout measures). Then, pinned, at 1 connection, the miss overhead over the core; and in both layouts
# open-loop latency runs at half and a quarter of the layout's median hit rate (p50, p99, p999) with
# gateway/loadtest/openloop, which times each request from when it was due, so the load generator's own queueing
# does not hide a slow server (vegeta, tried first, could not offer that rate from one CPU); OLPAIRS rounds of
# ceiling, hit and nginx at each rate.
# Usage: gateway/loadtest/loadtest.sh [duration]   (default 8s; or DUR=...). Needs wrk, nginx, varnish and
# redis-server, which it installs with apt-get when run as root.
# LAYOUT=pinned|unpinned|both (default both; PIN=1 alone means pinned). PAIRS=N rounds (default 5), OLPAIRS=N
# open-loop rounds (default 2), EVENTS=0 skips the counts. With the defaults both layouts take about 14 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${1:-${DUR:-8s}}
PAIRS=${PAIRS:-5}
OLPAIRS=${OLPAIRS:-2}
if [ -z "${LAYOUT:-}" ]; then
  LAYOUT=both
  [ "${PIN:-0}" = 1 ] && LAYOUT=pinned
fi
case $LAYOUT in pinned | unpinned | both) ;; *) echo "LAYOUT=$LAYOUT: want pinned, unpinned or both"; exit 2 ;; esac
if [ "$LAYOUT" = pinned ] && { ! command -v taskset >/dev/null || [ "$(nproc)" -lt 2 ]; }; then
  echo "the pinned layout needs taskset and two CPUs"; exit 1
fi
# What is missing is installed with apt-get when run as root (as .ci/deps does for the tests); else the command
# to run is printed.
need=()
for cmd in wrk nginx varnishd redis-server; do
  command -v "$cmd" >/dev/null || [ -x "/usr/sbin/$cmd" ] || need+=("$cmd")
done
if [ ${#need[@]} -gt 0 ]; then
  pkgs=$(printf '%s\n' "${need[@]}" | sed 's/^varnishd$/varnish/' | tr '\n' ' ')
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "the load test needs ${need[*]}: apt-get install -y $pkgs(as root)"; exit 1
  fi
  echo "installing $pkgs"
  # shellcheck disable=SC2086 # one word per package
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
fi
if [ "$LAYOUT" = both ]; then
  # Each layout starts its servers afresh (nginx's worker count differs); the binaries are built once.
  BIN=$(mktemp -d)
  trap 'rm -rf "$BIN"' EXIT
  go build -o "$BIN/reqgate" ./cmd/reqgate
  go build -o "$BIN/ceiling" ./gateway/loadtest/ceiling
  go build -o "$BIN/openloop" ./gateway/loadtest/openloop
  start=$(date +%s)
  status=0
  for l in pinned unpinned; do
    echo "== layout $l"
    LAYOUT=$l LOADTEST_BIN=$BIN PAIRS=$PAIRS OLPAIRS=$OLPAIRS "$0" "$DUR" | tee "$BIN/$l.out" ||
      { status=$?; echo "layout $l failed (exit $status)"; }
  done
  # The two layouts' findings together, as the medians and open-loop lines printed above.
  echo "== both layouts in $(( $(date +%s) - start )) s, load now $(cut -d' ' -f1-3 /proc/loadavg):"
  for l in pinned unpinned; do
    sed -n -e '/, median of /,/CPU stolen/p' -e '/ p99, us (median; rounds)/p' "$BIN/$l.out"
  done
  exit "$status"
fi
SRV=() LOAD=()
NCPU=$(nproc)
if [ "$LAYOUT" = pinned ]; then
  SRV=(taskset -c 0) LOAD=(taskset -c 1) NCPU=1
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
TMP=$(mktemp -d)
# nginx's proxy cache and every server's log are written under $TMP (the access logs grow by about 300 bytes a
# request): on a nearly full disk nginx answers nothing and its rounds read 0 req/s. Refuse to start instead.
free_mb=$(df -Pm "$TMP" | awk 'NR == 2 {print $4}')
if [ "${free_mb:-0}" -lt 4096 ]; then
  echo "the load test needs 4 GiB free under $TMP; $free_mb MiB are"; rmdir "$TMP"; exit 1
fi
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$TMP/nginx.pid" ] && kill "$(cat "$TMP/nginx.pid")" 2>/dev/null || true
  [ -f "$TMP/varnish.pid" ] && kill "$(cat "$TMP/varnish.pid")" 2>/dev/null || true
  wait 2>/dev/null || true; rm -rf "$TMP"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CORE=127.0.0.1:$(free_port); GW=127.0.0.1:$(free_port); CEIL=127.0.0.1:$(free_port); BUSYC=127.0.0.1:$(free_port)
BUSY=${BUSY:-6us}
GWR=127.0.0.1:$(free_port); NGX=127.0.0.1:$(free_port); VRN=127.0.0.1:$(free_port); REDIS_PORT=$(free_port)
PATH_=/api2/demo/re/1
AUTH="Authorization: Basic $(printf demo:demo | base64)"

if [ -n "${LOADTEST_BIN:-}" ]; then
  cp "$LOADTEST_BIN/reqgate" "$LOADTEST_BIN/ceiling" "$LOADTEST_BIN/openloop" "$TMP/"
else
  go build -o "$TMP/reqgate" ./cmd/reqgate
  go build -o "$TMP/ceiling" ./gateway/loadtest/ceiling
  go build -o "$TMP/openloop" ./gateway/loadtest/openloop
fi
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
worker_processes $NCPU;
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
# Varnish: the request's Authorization and URL are its cache key (Varnish passes a request with Authorization to
# the backend unless told otherwise), every 200 kept 30 s like nginx's, at its default thread pools (two).
cat >"$TMP/varnish.vcl" <<VCL
vcl 4.1;
backend core { .host = "${CORE%:*}"; .port = "${CORE##*:}"; }
sub vcl_recv {
  if (req.method != "GET" && req.method != "HEAD") { return (pass); }
  return (hash);
}
sub vcl_hash {
  hash_data(req.http.Authorization);
  hash_data(req.url);
  return (lookup);
}
sub vcl_backend_response {
  if (beresp.status == 200) { set beresp.ttl = 30s; set beresp.grace = 0s; }
  return (deliver);
}
sub vcl_deliver {
  if (obj.hits > 0) { set resp.http.X-Cache = "HIT"; } else { set resp.http.X-Cache = "MISS"; }
}
VCL
VARNISH_JAIL=()
[ "$(id -u)" = 0 ] && VARNISH_JAIL=(-j none) # as root, no unprivileged user to enter $TMP
"${SRV[@]}" "$(command -v varnishd || echo /usr/sbin/varnishd)" "${VARNISH_JAIL[@]}" -a "$VRN" -f "$TMP/varnish.vcl" \
  -n "$TMP/varnish" -P "$TMP/varnish.pid" -s malloc,256m >"$TMP/varnish.log" 2>&1
for addr in "$CORE" "$GW" "$GWR"; do
  for _ in $(seq 100); do curl -sf "http://$addr/readyz" >/dev/null && break; sleep 0.1; done
done
"${SRV[@]}" "$TMP/ceiling" -listen "$CEIL" -from "http://$CORE$PATH_" -auth "${AUTH#Authorization: }" >"$TMP/ceil.log" 2>&1 & PIDS+=($!); CEIL_PID=$!
for _ in $(seq 100); do curl -sf "http://$CEIL/" >/dev/null && break; sleep 0.1; done
if [ "$LAYOUT" = unpinned ]; then
  "${SRV[@]}" "$TMP/ceiling" -listen "$BUSYC" -from "http://$CORE$PATH_" -auth "${AUTH#Authorization: }" -work "$BUSY" >"$TMP/busy.log" 2>&1 & PIDS+=($!); BUSY_PID=$!
  for _ in $(seq 100); do curl -sf "http://$BUSYC/" >/dev/null && break; sleep 0.1; done
fi
for _ in $(seq 100); do curl -s -o /dev/null "http://$VRN/" && break; sleep 0.1; done
# Verify the credential at each gateway and fill every cache (the JSON form too).
for addr in "$GW" "$GWR" "$NGX" "$VRN"; do
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
varnish_pids() { local m; m=$(cat "$TMP/varnish.pid"); echo "$m $(pgrep -P "$m" | tr '\n' ' ')"; }
load() { cut -d' ' -f1 /proc/loadavg; }
# machine_ticks: "busy idle" ticks of all CPUs so far (busy: user, nice, system, irq, softirq, steal; idle: idle,
# iowait). A request's time on the whole machine is its server's CPU, the rest of the busy time (the load
# generator above all) and the idle time: where req/s differ at equal server CPU, the other two say why.
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }

run() { # name conns url "pids serving" [wrk args]; sets RPS, US (server CPU microseconds per request), P99,
  # REST (the rest of the machine's busy CPU per request: wrk, the kernel's work not charged to a process, any
  # other process) and IDLE (its idle CPU per request)
  local name=$1 conns=$2 url=$3 pids=$4; shift 4
  local before after out n mark m0 m1
  before=$(cpu_ticks $pids) mark=$(steal_mark) m0=$(machine_ticks)
  out=$("${LOAD[@]}" wrk -t1 -c"$conns" -d"$DUR" --latency -H "$AUTH" "$@" "$url")
  after=$(cpu_ticks $pids) STEAL=$(steal_pct "$mark") m1=$(machine_ticks)
  RPS=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  P99=$(awk '$1=="99%" {print $2}' <<<"$out")
  US=$(awk -v n="$n" -v t="$(( after - before ))" 'BEGIN { printf "%.2f", t * 10000 / n }')
  REST=$(awk -v n="$n" -v t="$(( ${m1% *} - ${m0% *} - (after - before) ))" 'BEGIN { printf "%.2f", t * 10000 / n }')
  IDLE=$(awk -v n="$n" -v t="$(( ${m1#* } - ${m0#* } ))" 'BEGIN { printf "%.2f", t * 10000 / n }')
  if grep -q "Non-2xx" <<<"$out"; then echo "$name: non-2xx responses"; grep Non-2xx <<<"$out"; fi
  printf '  %-8s c=%-3s %10s req/s  p99 %-9s %6s us server CPU per request, the rest %s us, idle %s us  (steal %s%%, load %s)\n' \
    "$name" "$conns" "$RPS" "$P99" "$US" "$REST" "$IDLE" "$STEAL" "$(load)"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
span() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

# Warm-up: a few seconds of load on each server first (heap growth, first GC cycles, connection set-up).
for url in "http://$CORE$PATH_" "http://$GW$PATH_" "http://$CEIL$PATH_" "http://$GWR$PATH_" "http://$NGX$PATH_" "http://$VRN$PATH_"; do
  "${LOAD[@]}" wrk -t1 -c64 -d"${WARMUP:-3s}" -H "$AUTH" "$url" >/dev/null
done
"${LOAD[@]}" wrk -t1 -c64 -d"${WARMUP:-3s}" -H "$AUTH" -H "Accept: application/json" "http://$GW$PATH_" >/dev/null
[ "$LAYOUT" = unpinned ] && "${LOAD[@]}" wrk -t1 -c64 -d"${WARMUP:-3s}" -H "$AUTH" "http://$BUSYC$PATH_" >/dev/null
if [ "$LAYOUT" = pinned ]; then
  echo "layout pinned: servers on CPU 0 (nginx 1 worker, GOMAXPROCS 1), wrk on CPU 1"
else
  echo "layout unpinned: nothing pinned (nginx $NCPU workers, reqgate GOMAXPROCS $(nproc)), wrk free on the same CPUs"
fi
echo "wrk -t1 -c64 -d$DUR, GET $PATH_ ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
R_NGX=() R_VRN=() R_CPU=() R_NCPU=() R_RL=() R_JSON=() R_BR=() HITS=() STEALS=()
C_US=() N_US=() V_US=() H_US=() C_REST=() N_REST=() H_REST=() C_IDLE=() N_IDLE=() H_IDLE=()
B_US=() B_REST=() B_IDLE=() R_BUSY=()
for round in $(seq "$PAIRS"); do
  echo "round $round:"
  # The compared servers take turns at going first: a server run right after another inherits its aftermath
  # (Varnish's worker threads winding down, the page cache the access logs dirtied), so no server always
  # follows the same one.
  order=(ceiling nginx varnish hit)
  [ "$LAYOUT" = unpinned ] && order+=(busy)
  for i in "${!order[@]}"; do
    case ${order[$(((i + round - 1) % ${#order[@]}))]} in
    busy) run busy 64 "http://$BUSYC$PATH_" "$BUSY_PID"; BSR=$RPS; STEALS+=("$STEAL") B_US+=("$US") B_REST+=("$REST") B_IDLE+=("$IDLE") ;;
    ceiling) run ceiling 64 "http://$CEIL$PATH_" "$CEIL_PID"; CR=$RPS CU=$US; STEALS+=("$STEAL") C_US+=("$US") C_REST+=("$REST") C_IDLE+=("$IDLE") ;;
    nginx) run nginx 64 "http://$NGX$PATH_" "$(nginx_pids)"; NR=$RPS NU=$US; STEALS+=("$STEAL") N_US+=("$US") N_REST+=("$REST") N_IDLE+=("$IDLE") ;;
    varnish) run varnish 64 "http://$VRN$PATH_" "$(varnish_pids)"; VR=$RPS; STEALS+=("$STEAL") V_US+=("$US") ;;
    hit) run hit 64 "http://$GW$PATH_" "$GW_PID"; HR=$RPS HU=$US; STEALS+=("$STEAL") H_US+=("$US") H_REST+=("$REST") H_IDLE+=("$IDLE") ;;
    esac
  done
  R_NGX+=("$(pct "$HR" "$NR")") R_VRN+=("$(pct "$HR" "$VR")") R_CPU+=("$(ratio "$HU" "$CU")") R_NCPU+=("$(ratio "$HU" "$NU")") HITS+=("$HR")
  line="  hit / nginx ${R_NGX[-1]}%, hit CPU per request / nginx's ${R_NCPU[-1]}x, / ceiling's ${R_CPU[-1]}x, hit / varnish ${R_VRN[-1]}%, hit / ceiling $(pct "$HR" "$CR")%"
  if [ "$LAYOUT" = unpinned ]; then
    R_BUSY+=("$(pct "$HR" "$BSR")")
    line="$line, hit / busy ceiling ${R_BUSY[-1]}%"
  fi
  if [ "$LAYOUT" = pinned ]; then
    run json 64 "http://$GW$PATH_" "$GW_PID" -H "Accept: application/json"; JR=$RPS
    run br 64 "http://$GW$PATH_" "$GW_PID" -H "Accept-Encoding: br"; BR=$RPS
    run rl 64 "http://$GWR$PATH_" "$GWR_PID $REDIS_PID"; RR=$RPS
    R_RL+=("$(pct "$RR" "$HR")") R_JSON+=("$(pct "$JR" "$HR")") R_BR+=("$(pct "$BR" "$HR")")
    line="$line, redis policy / hit ${R_RL[-1]}%, json / xml ${R_JSON[-1]}%, br / plain ${R_BR[-1]}%"
  fi
  echo "$line"
done
echo "$LAYOUT, median of $PAIRS rounds (the rounds' spread in brackets):"
echo "  hit / nginx $(median "${R_NGX[@]}")% ($(span "${R_NGX[@]}")%; target >= 100%), hit / varnish $(median "${R_VRN[@]}")% ($(span "${R_VRN[@]}")%)"
echo "  hit CPU per request / nginx's $(median "${R_NCPU[@]}")x ($(span "${R_NCPU[@]}")x; target <= 1), / ceiling's $(median "${R_CPU[@]}")x ($(span "${R_CPU[@]}")x; target <= 1.3x)"
echo "  server CPU per request, us: ceiling $(median "${C_US[@]}") ($(span "${C_US[@]}")), nginx $(median "${N_US[@]}") ($(span "${N_US[@]}")), varnish $(median "${V_US[@]}") ($(span "${V_US[@]}")), hit $(median "${H_US[@]}") ($(span "${H_US[@]}"))"
echo "  the rest of the machine per request (wrk, the kernel's own), us: ceiling $(median "${C_REST[@]}") ($(span "${C_REST[@]}")), nginx $(median "${N_REST[@]}") ($(span "${N_REST[@]}")), hit $(median "${H_REST[@]}") ($(span "${H_REST[@]}"))"
echo "  idle CPU per request, us: ceiling $(median "${C_IDLE[@]}") ($(span "${C_IDLE[@]}")), nginx $(median "${N_IDLE[@]}") ($(span "${N_IDLE[@]}")), hit $(median "${H_IDLE[@]}") ($(span "${H_IDLE[@]}"))"
if [ "$LAYOUT" = unpinned ]; then
  echo "  the ceiling busy $BUSY a request: server CPU $(median "${B_US[@]}") ($(span "${B_US[@]}")) us, the rest $(median "${B_REST[@]}") ($(span "${B_REST[@]}")) us, idle $(median "${B_IDLE[@]}") ($(span "${B_IDLE[@]}")) us; hit / busy ceiling $(median "${R_BUSY[@]}")% ($(span "${R_BUSY[@]}")%)"
fi
if [ "$LAYOUT" = pinned ]; then
  echo "  redis policy / hit $(median "${R_RL[@]}")% (target >= 85%), json / xml $(median "${R_JSON[@]}")% (target >= 97%),"
  echo "  brotli hit / plain hit $(median "${R_BR[@]}")% (target >= 90%)"
fi
echo "  CPU stolen by the host during the compared servers' runs: at most $(printf '%s\n' "${STEALS[@]}" | sort -g | tail -1)% (above a few percent, rerun)"

# Where the CPU goes, counted rather than timed (counts hold when the machine is busy, times do not): one more
# wrk run per server under `perf stat` with the kernel's tracepoints, per request: system calls, context switches
# (the server's threads leaving a CPU), wake-ups its threads perform (of wrk, above all, when a response lands,
# and of the server's own threads), futex calls (Go's scheduler waking or parking a
# thread), nanosleeps (Go's sysmon thread, which sleeps 20 us at a time while it finds Ps to retake from system
# calls) and epoll waits. EVENTS=0 skips it; it needs perf (Debian's linux-perf) and tracepoints (root).
if [ "${EVENTS:-1}" = 1 ] && command -v perf >/dev/null && perf stat -e sched:sched_switch true >/dev/null 2>&1; then
  echo "$LAYOUT, events per request (perf stat, one run of $DUR each; syscalls, context switches, wake-ups, futex, nanosleep, epoll waits):"
  for target in "ceiling http://$CEIL$PATH_ $CEIL_PID" "nginx http://$NGX$PATH_ $(nginx_pids)" "varnish http://$VRN$PATH_ $(varnish_pids)" "hit http://$GW$PATH_ $GW_PID"; do
    read -r name url pids <<<"$target"
    # shellcheck disable=SC2086 # one pid a word
    perf stat -x, -o "$TMP/events.csv" -e raw_syscalls:sys_enter,sched:sched_switch,sched:sched_wakeup,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait \
      -p "$(tr ' ' ',' <<<"${pids% }")" >/dev/null 2>&1 & STAT_PID=$!
    sleep 0.2
    run "$name" 64 "$url" "$pids" >"$TMP/events.run"
    kill -INT "$STAT_PID"; wait "$STAT_PID" 2>/dev/null || true
    awk -F, -v n="$(awk -v r="$RPS" -v d="${DUR%s}" 'BEGIN { print r * d }')" -v name="$name" -v rps="$RPS" -v us="$US" '
      /^[0-9]/ { split($3, e, ":"); c[e[2]] += $1 }
      END { printf "  %-8s %10s req/s %6s us | syscalls %.2f, switches %.3f, wake-ups %.3f, futex %.3f, nanosleep %.3f, epoll waits %.3f\n",
              name, rps, us, c["sys_enter"] / n, c["sched_switch"] / n, c["sched_wakeup"] / n, c["sys_enter_futex"] / n,
              c["sys_enter_nanosleep"] / n, (c["sys_enter_epoll_wait"] + c["sys_enter_epoll_pwait"]) / n }' "$TMP/events.csv"
  done
fi

if [ "$LAYOUT" = pinned ]; then
  echo "one connection (latency; the miss is a fetch from the core, copied and stored):"
  run core 1 "http://$CORE$PATH_" "$CORE_PID"
  run miss 1 "http://$GW$PATH_" "$GW_PID $CORE_PID" -H "Cache-Control: no-cache"
  run hit 1 "http://$GW$PATH_" "$GW_PID"
fi

# At half the median hit rate (the target's point) and at a quarter of it, OLPAIRS rounds of the three servers.
for div in 2 4; do
  RATE=$(awk -v r="$(median "${HITS[@]}")" -v d="$div" 'BEGIN { printf "%d", r / d }')
  echo "open loop ($LAYOUT): gateway/loadtest/openloop at $RATE req/s (1/$div of the median hit rate) for $DUR, 64 connections, cache hits:"
  P_C=() P_H=() P_N=()
  for olround in $(seq "$OLPAIRS"); do
    # The ceiling's figures are this machine's floor: what any server shows here at that rate.
    for target in "ceiling http://$CEIL$PATH_ $CEIL_PID" "hit http://$GW$PATH_ $GW_PID" "nginx http://$NGX$PATH_ $(nginx_pids)"; do
      read -r name url pids <<<"$target"
      printf '  %s %-6s ' "$olround" "$name"
      before=$(cpu_ticks "$CORE_PID") sbefore=$(cpu_ticks $pids) mark=$(steal_mark)
      out=$("${LOAD[@]}" "$TMP/openloop" -url "$url" -H "$AUTH" -rate "$RATE" -duration "$DUR" -conns 64); echo "$out"
      p99=$(sed -n 's/.* p99 \([0-9]*\) us .*/\1/p' <<<"$out")
      case $name in ceiling) P_C+=("$p99") ;; hit) P_H+=("$p99") ;; nginx) P_N+=("$p99") ;; esac
      # Requests arriving one by one cost a server more CPU each than wrk's back-to-back ones (a wake-up each).
      # The core shares the servers' CPU: its CPU during the run says whether anything of it ran beside the server.
      echo "           server CPU $(awk -v t="$(( $(cpu_ticks $pids) - sbefore ))" -v n="${out%% *}" 'BEGIN { printf "%.1f", t * 10000 / n }') us per request; the core's CPU during the run: $(( ($(cpu_ticks "$CORE_PID") - before) * 10 )) ms; steal $(steal_pct "$mark")%, load $(load)"
    done
  done
  echo "  $LAYOUT 1/$div p99, us (median; rounds): ceiling $(median "${P_C[@]}") (${P_C[*]}), hit $(median "${P_H[@]}") (${P_H[*]}), nginx $(median "${P_N[@]}") (${P_N[*]}) (target: hit <= nginx)"
done
echo "access log lines written at info: $(grep -c '"msg":"request"' "$TMP/gw.log" || true)"
