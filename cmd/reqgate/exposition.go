package main

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/VictoriaMetrics/metrics"
)

// The packages register their metrics with github.com/VictoriaMetrics/metrics, which can write TYPE lines but
// no help text, types a few monotonic process series as gauges, and names three Go series *_count.
// writeMetrics serves that exposition with the metadata Prometheus tooling expects (promtool check metrics
// passes): a HELP and a TYPE line per family from the families table, the table's type where it differs, and
// conformant names for the Go counters. docs/operations.md lists the same families; a test holds the two equal.

// family is the metadata of one metric family.
type family struct {
	typ  string // counter, gauge, histogram or summary
	help string
}

// renamed are Go runtime series whose VictoriaMetrics names break Prometheus's naming rules: counters end in
// _total, and only histograms and summaries have series ending in _count.
var renamed = map[string]string{
	"go_cgo_calls_count": "go_cgo_calls_total",
	"go_gc_forced_count": "go_gc_forced_total",
	"go_cpu_count":       "go_cpus",
}

func init() {
	metrics.ExposeMetadata(true) // TYPE lines for every family, also of the Go and process series
}

// writeMetrics writes the Prometheus text exposition of the process.
func writeMetrics(w io.Writer) {
	var buf bytes.Buffer
	metrics.WritePrometheus(&buf, true)
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# HELP ") {
			continue // an empty help; written with the TYPE line below
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			name = rename(name)
			f, known := families[name]
			if !known {
				f = family{typ: typ, help: "undocumented reqgate metric (add it to the families table)"}
			}
			bw.WriteString("# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.typ + "\n")
			continue
		}
		bw.WriteString(renameSample(line))
		bw.WriteByte('\n')
	}
}

// rename maps a family name to its exposed name.
func rename(name string) string {
	if to, ok := renamed[name]; ok {
		return to
	}
	return name
}

// renameSample renames the family of one sample line.
func renameSample(line string) string {
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return line
	}
	if to, ok := renamed[line[:end]]; ok {
		return to + line[end:]
	}
	return line
}

// families is the metadata of every family a reqgate process exports: its own (each process exports all of
// them, the ones of roles it does not run stay at zero), then the Go runtime's and the process's.
var families = map[string]family{
	"reqgate_build_info":           {"gauge", "Always 1; the labels name the release, VCS revision and Go version of the binary."},
	"reqgate_config_reloads_total": {"counter", "Configuration reloads (SIGHUP), by result: applied, or refused (the configuration in force stays)."},

	"reqgate_gateway_requests_total":             {"counter", "Requests answered by the gateway, by route class, status code and cache outcome."},
	"reqgate_gateway_request_seconds":            {"histogram", "Time from request to response as seen by the gateway, by route class."},
	"reqgate_gateway_upstream_seconds":           {"histogram", "Time of the exchange with the core, by route class."},
	"reqgate_gateway_upstream_requests_total":    {"counter", "Requests the gateway forwarded to the core (misses, writes, credential checks)."},
	"reqgate_gateway_read_retries_total":         {"counter", "Reads (GET, HEAD) that failed at one core after they were sent and were sent again to another."},
	"reqgate_gateway_upstream_up":                {"gauge", "1 while the core at the upstream address is in the balancer, 0 while it is out (several cores only)."},
	"reqgate_gateway_upstream_transitions_total": {"counter", "Times a core was taken out of (to=down) or put back into (to=up) the balancer."},
	"reqgate_gateway_singleflight_shared_total":  {"counter", "Concurrent identical reads answered by one upstream request."},
	"reqgate_gateway_panics_total":               {"counter", "Handler panics recovered and answered 500."},
	"reqgate_gateway_connections_refused_total":  {"counter", "Connections refused at once, by reason: their address held server.max_conns_per_ip (per_ip) or their network server.max_conns_per_prefix (per_prefix) already (429), or every place was taken by a connection being served (max_conns, 503)."},
	"reqgate_gateway_connections_shed_total":     {"counter", "Connections waiting for a request head or idle that were closed, near server.max_conns, to make room for a new one."},
	"reqgate_gateway_connections_open":           {"gauge", "Client connections open on the public listener."},
	"reqgate_gateway_header_timeouts_total":      {"counter", "Connections closed with 408 because a request head did not arrive within server.header_timeout."},
	"reqgate_gateway_connection_timeouts_total":  {"counter", "Connections closed idle for server.idle_timeout (phase idle), or because a write did not complete within server.write_timeout (phase write)."},
	"reqgate_gateway_connection_errors_total":    {"counter", "Connections the server stopped serving on a client's error: a request it could not parse, a failed TLS handshake."},
	"reqgate_gateway_body_budget_refused_total":  {"counter", "Request bodies refused with 503 because server.body_budget was spent."},
	"reqgate_gateway_body_share_refused_total":   {"counter", "Request bodies refused with 503 because their account's or client address's share of the budget (server.body_share) was held, by key."},
	"reqgate_gateway_body_too_slow_total":        {"counter", "Request bodies dropped with 408 because they arrived slower than server.min_upload_rate."},
	"reqgate_gateway_not_forwarded_total":        {"counter", "Requests answered 503 instead of being forwarded: their caller had closed its connection (client_gone), they waited longer than upstream.queue_timeout (queue_timeout), or no slot of their account under upstream.max_inflight_per_account came free in time (account_busy)."},
	"reqgate_gateway_account_queued_total":       {"counter", "Requests that found their account at upstream.max_inflight_per_account and waited for a slot (answered 503 when none came free: not_forwarded_total{reason=account_busy})."},
	"reqgate_gateway_account_requests_total":     {"counter", "Requests of callers the core proved, by account: the metrics.top_accounts busiest accounts by api_key, every other one as account=\"other\"."},
	"reqgate_gateway_account_errors_total":       {"counter", "Requests of proved callers answered 4xx or 5xx (throttled ones included), by account and status class."},
	"reqgate_gateway_account_throttled_total":    {"counter", "Requests of proved callers refused by a rate policy, by account."},
	"reqgate_gateway_account_cache_hits_total":   {"counter", "Requests of proved callers answered from the gateway's cache, by account."},
	"reqgate_tls_cert_expiry_seconds":            {"gauge", "Seconds until the NotAfter of the certificate the public listener presents (negative once expired); follows reloads. Only with TLS."},
	"reqgate_auth_verifications_total":           {"counter", "Credentials the core proved that the gateway did not yet trust."},
	"reqgate_auth_failures_total":                {"counter", "Requests the core answered 401 (wrong or unknown credentials)."},
	"reqgate_auth_blocked_total":                 {"counter", "Login attempts rejected after too many failures (auth.max_*_failures)."},
	"reqgate_auth_failure_overflows_total":       {"counter", "Failed logins counted in the coarse shared table because the in-process failure store was full (their counts are kept, never dropped)."},
	"reqgate_auth_failure_store_errors_total":    {"counter", "Failed-login counts that could not be read from or written to Redis."},
	"reqgate_auth_delayed_total":                 {"counter", "Login attempts held before the core was asked: past auth.max_user_failures_all_ips, from a network the user had not logged in from."},
	"reqgate_auth_delayed_refused_total":         {"counter", "Login attempts refused because auth.max_delayed_logins (or the 4 of one user) were waiting already."},

	"reqgate_cache_hits_total":           {"counter", "Cacheable reads served from the gateway's memory."},
	"reqgate_cache_misses_total":         {"counter", "Cacheable reads fetched from the core."},
	"reqgate_cache_stale_total":          {"counter", "Stale entries served because the core failed (cache.stale_if_error)."},
	"reqgate_cache_evictions_total":      {"counter", "Entries dropped to stay within cache.max_bytes."},
	"reqgate_cache_invalidations_total":  {"counter", "Entries invalidated by writes, local or from other replicas."},
	"reqgate_cache_bytes":                {"gauge", "Memory the response cache holds now (entries and tables), counted against cache.max_bytes."},
	"reqgate_cache_bus_up":               {"gauge", "1 while the Redis invalidation channel works, else 0 (always 0 without Redis)."},
	"reqgate_cache_bus_received_total":   {"counter", "Invalidations received from other replicas over Redis."},
	"reqgate_cache_bus_errors_total":     {"counter", "Errors of the Redis invalidation channel."},
	"reqgate_cache_bus_evictions_total":  {"counter", "Replicas evicted from the bus because they did not acknowledge an invalidation within cache.replica_lease."},
	"reqgate_cache_bus_lease_lost_total": {"counter", "Times this replica was evicted from the bus and stopped serving hits until it joined again."},

	"reqgate_translate_duration_seconds":  {"histogram", "Time of one XML<->JSON translation, by direction."},
	"reqgate_translate_input_bytes_total": {"counter", "Bytes translated, by direction."},
	"reqgate_translate_errors_total":      {"counter", "Translations refused, by direction and kind (xml, syntax, structure)."},

	"reqgate_ratelimit_decisions_total":         {"counter", "Rate-limit decisions, by result (admit, delay, reject)."},
	"reqgate_ratelimit_held":                    {"gauge", "Requests held for a shaped slot now."},
	"reqgate_ratelimit_redis_up":                {"gauge", "1 while limits are shared in Redis, 0 on the on_redis_error fallback (always 0 without Redis)."},
	"reqgate_ratelimit_replicas":                {"gauge", "Gateway replicas this one last counted in Redis; the local fallback admits limit/replicas (ratelimit.local_replicas before the first count)."},
	"reqgate_ratelimit_redis_duration_seconds":  {"histogram", "Time of one limiter script call to Redis."},
	"reqgate_ratelimit_redis_errors_total":      {"counter", "Limiter calls to Redis that failed or exceeded ratelimit.redis_timeout."},
	"reqgate_ratelimit_redis_fallback_total":    {"counter", "Rate-limit decisions made without Redis."},
	"reqgate_ratelimit_redis_switches_total":    {"counter", "Switches to the fallback (to=fallback) and back to Redis (to=redis)."},
	"reqgate_ratelimit_reject_cache_hits_total": {"counter", "Requests rejected from the replica's memory of a recent rejection in Redis, without a round trip."},
	"reqgate_ratelimit_credit_hits_total":       {"counter", "Requests admitted on a slot reserved in Redis ahead (a credit), without a round trip."},

	"reqgate_core_requests_total":                 {"counter", "Requests answered by the core, by route class, method and status code."},
	"reqgate_core_request_seconds":                {"histogram", "Time to answer in the core, by route class and method."},
	"reqgate_core_store_seconds":                  {"histogram", "Time of one store call (SQLite or PostgreSQL), by operation."},
	"reqgate_core_store_tx_retries_total":         {"counter", "PostgreSQL transactions retried after a serialization failure or deadlock."},
	"reqgate_core_purge_publish_errors_total":     {"counter", "Account purges the core could not publish to the gateways over Redis."},
	"reqgate_core_store_pool_conns":               {"gauge", "PostgreSQL pool connections, by state (acquired, idle, total)."},
	"reqgate_core_store_pool_max_conns":           {"gauge", "Size limit of the PostgreSQL pool (pool_max_conns)."},
	"reqgate_core_store_pool_empty_acquire_total": {"counter", "PostgreSQL pool acquires that had to wait for a connection."},

	"go_info":                              {"gauge", "Always 1; the label names the Go version."},
	"go_info_ext":                          {"gauge", "Always 1; the labels name the compiler, GOARCH, GOOS and GOROOT."},
	"go_goroutines":                        {"gauge", "Goroutines that exist now."},
	"go_threads":                           {"gauge", "OS threads created."},
	"go_gomaxprocs":                        {"gauge", "GOMAXPROCS: CPUs that run Go code at once."},
	"go_cpus":                              {"gauge", "Logical CPUs usable by the process."},
	"go_cgo_calls_total":                   {"counter", "Calls from Go to C."},
	"go_gc_duration_seconds":               {"summary", "Pause durations of the last garbage collections."},
	"go_gc_forced_total":                   {"counter", "Garbage collections forced by the application (runtime.GC)."},
	"go_gc_cpu_seconds_total":              {"counter", "CPU time spent on garbage collection."},
	"go_gc_mark_assist_cpu_seconds_total":  {"counter", "CPU time goroutines spent assisting the garbage collector."},
	"go_gc_pauses_seconds":                 {"histogram", "Stop-the-world pauses of the garbage collector (no _sum or _count: the runtime does not record them)."},
	"go_sched_latencies_seconds":           {"histogram", "Time goroutines waited runnable before running (no _sum or _count: the runtime does not record them)."},
	"go_mutex_wait_seconds_total":          {"counter", "Time goroutines spent blocked on sync.Mutex and sync.RWMutex."},
	"go_scavenge_cpu_seconds_total":        {"counter", "CPU time spent returning memory to the OS."},
	"go_memlimit_bytes":                    {"gauge", "The Go memory limit (GOMEMLIMIT)."},
	"go_memstats_alloc_bytes":              {"gauge", "Heap bytes allocated and in use."},
	"go_memstats_alloc_bytes_total":        {"counter", "Heap bytes allocated, freed ones included."},
	"go_memstats_buck_hash_sys_bytes":      {"gauge", "Bytes of the profiling bucket hash table."},
	"go_memstats_frees_total":              {"counter", "Heap objects freed."},
	"go_memstats_gc_cpu_fraction":          {"gauge", "Share of the CPU time used by the garbage collector since the start."},
	"go_memstats_gc_sys_bytes":             {"gauge", "Bytes of garbage collection metadata."},
	"go_memstats_heap_alloc_bytes":         {"gauge", "Heap bytes allocated and in use."},
	"go_memstats_heap_idle_bytes":          {"gauge", "Heap bytes in idle spans."},
	"go_memstats_heap_inuse_bytes":         {"gauge", "Heap bytes in in-use spans."},
	"go_memstats_heap_objects":             {"gauge", "Heap objects allocated."},
	"go_memstats_heap_released_bytes":      {"gauge", "Heap bytes returned to the OS."},
	"go_memstats_heap_sys_bytes":           {"gauge", "Heap bytes obtained from the OS."},
	"go_memstats_last_gc_time_seconds":     {"gauge", "Time of the last garbage collection, in seconds since the Unix epoch."},
	"go_memstats_lookups_total":            {"counter", "Pointer lookups done by the runtime."},
	"go_memstats_mallocs_total":            {"counter", "Heap objects allocated, freed ones included."},
	"go_memstats_mcache_inuse_bytes":       {"gauge", "Bytes in use by mcache structures."},
	"go_memstats_mcache_sys_bytes":         {"gauge", "Bytes obtained from the OS for mcache structures."},
	"go_memstats_mspan_inuse_bytes":        {"gauge", "Bytes in use by mspan structures."},
	"go_memstats_mspan_sys_bytes":          {"gauge", "Bytes obtained from the OS for mspan structures."},
	"go_memstats_next_gc_bytes":            {"gauge", "Heap size at which the next garbage collection starts."},
	"go_memstats_other_sys_bytes":          {"gauge", "Bytes of other runtime allocations."},
	"go_memstats_stack_inuse_bytes":        {"gauge", "Bytes in use by the stack allocator."},
	"go_memstats_stack_sys_bytes":          {"gauge", "Bytes obtained from the OS for the stack allocator."},
	"go_memstats_sys_bytes":                {"gauge", "Bytes obtained from the OS in all."},
	"process_cpu_seconds_total":            {"counter", "CPU time of the process, user and system."},
	"process_cpu_seconds_user_total":       {"counter", "User CPU time of the process."},
	"process_cpu_seconds_system_total":     {"counter", "System CPU time of the process."},
	"process_major_pagefaults_total":       {"counter", "Page faults that needed a disk read."},
	"process_minor_pagefaults_total":       {"counter", "Page faults served without a disk read."},
	"process_num_threads":                  {"gauge", "OS threads of the process."},
	"process_open_fds":                     {"gauge", "Open file descriptors."},
	"process_max_fds":                      {"gauge", "Limit of open file descriptors."},
	"process_resident_memory_bytes":        {"gauge", "Resident memory size."},
	"process_resident_memory_peak_bytes":   {"gauge", "Highest resident memory size."},
	"process_resident_memory_anon_bytes":   {"gauge", "Resident anonymous memory."},
	"process_resident_memory_file_bytes":   {"gauge", "Resident file-backed memory."},
	"process_resident_memory_shared_bytes": {"gauge", "Resident shared memory."},
	"process_virtual_memory_bytes":         {"gauge", "Virtual memory size."},
	"process_virtual_memory_peak_bytes":    {"gauge", "Highest virtual memory size."},
	"process_start_time_seconds":           {"gauge", "Start time of the process, in seconds since the Unix epoch."},
	// VictoriaMetrics types these as gauges; they only grow.
	"process_io_read_bytes_total":                   {"counter", "Bytes read by the process (read system calls, cache included)."},
	"process_io_written_bytes_total":                {"counter", "Bytes written by the process (write system calls)."},
	"process_io_read_syscalls_total":                {"counter", "Read system calls of the process."},
	"process_io_write_syscalls_total":               {"counter", "Write system calls of the process."},
	"process_io_storage_read_bytes_total":           {"counter", "Bytes the process caused to be read from storage."},
	"process_io_storage_written_bytes_total":        {"counter", "Bytes the process caused to be written to storage."},
	"process_pressure_cpu_waiting_seconds_total":    {"counter", "Time some of the cgroup's tasks waited for a CPU (PSI)."},
	"process_pressure_cpu_stalled_seconds_total":    {"counter", "Time all of the cgroup's tasks waited for a CPU (PSI)."},
	"process_pressure_io_waiting_seconds_total":     {"counter", "Time some of the cgroup's tasks waited for I/O (PSI)."},
	"process_pressure_io_stalled_seconds_total":     {"counter", "Time all of the cgroup's tasks waited for I/O (PSI)."},
	"process_pressure_memory_waiting_seconds_total": {"counter", "Time some of the cgroup's tasks waited for memory (PSI)."},
	"process_pressure_memory_stalled_seconds_total": {"counter", "Time all of the cgroup's tasks waited for memory (PSI)."},
}
