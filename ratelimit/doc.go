// Package ratelimit is the gateway's rate limiter: GCRA (generic cell rate algorithm) or a sliding window per
// policy, shared across any number of gateway replicas through one atomic Lua script in Redis, or in process when
// no Redis is configured.
//
// # Semantics
//
// A Policy allows Limit requests per Period with Burst arriving at once, counted per api_key, per
// user (api_key + Basic user name) or per client IP. Every policy that matches a request must admit it, and a
// request that one policy rejects consumes no other policy's quota. Overrides replace a policy's numbers for one
// api_key. GCRA keeps one value per key, the theoretical arrival time (TAT): requests are spaced Period/Limit
// apart in the long run and may run up to Burst intervals ahead.
//
// A policy of Algorithm AlgorithmWindow instead admits at most Limit requests in any Period-long interval: each
// key keeps the times of the requests it admitted in the last Period (window.go). With Block, a request refused
// for a full window blocks the key for Block, and each request refused while blocked starts the Block again;
// Retry-After and Status give the time left. Window policies have no burst, no shaping and no credits, and key
// sets with a Block skip the reject cache (each refusal must restart the block in Redis).
//
// Shaping: with MaxDelay > 0, a request over the rate whose slot lies within MaxDelay is not rejected; Admit
// reserves the slot atomically (it counts like an admitted request, so the long-run rate never exceeds the policy)
// and holds the caller until the slot, so held requests are forwarded in order, one interval apart. At most
// MaxHeld requests per policy key are held in one process; beyond that a request over the rate is rejected.
//
// # Redis
//
// A decision in Redis is one script call (EVALSHA, EVAL after NOSCRIPT) that reads every matching policy's TAT,
// decides with the time of the Redis server (so replicas share one clock) and writes all TATs only if all admit.
// Keys are "reqgate:rl:<policy>:<k|u|i>:<value>" and expire once their TAT has passed; a window's are
// "reqgate:rlw:<policy>:<k|u|i>:<value>" (sorted sets) and expire once their last time and block have passed. Status runs the same
// script read-only (EVALSHA_RO) and never counts. Calls from concurrent requests share round trips through
// go-redis' autopipeliner unless NoAutoPipeline is set. The in-process limiter (no Redis) runs the same
// arithmetic (decide in gcra.go) on the monotonic clock. All policies of one request are checked in one script,
// so their keys must live on one Redis node: use a single Redis (or a primary with replicas), not Redis Cluster.
//
// Two shortcuts spare the round trip where the answer is already known, and both keep the replicas within the
// policy:
//
//   - Reject cache (rejectcache.go): a replica remembers each Redis rejection of a key set until its Retry-After
//     and rejects the same keys meanwhile locally, exactly as Redis would, since a TAT never moves back (unless
//     Redis loses its data: then a remembered rejection can outlast it by up to its Retry-After). A client
//     flooding far above its limit costs Redis about one call per Retry-After per replica. NoRejectCache turns
//     it off.
//   - Credits (credits.go): for fast policies (800 per second or more) far from their limit, the script reserves
//     up to 64 extra slots for the replica with an admitted request, and the replica admits that many requests
//     of the same keys without a round trip. Every credit is a slot counted in Redis, so the replicas never admit
//     more than the policy; a credit unused within 50ms is a slot lost, not one gained. Near the limit, and for
//     slower policies, every request goes to Redis. NoCredits turns it off.
//
// When a script call fails or takes longer than RedisTimeout (ratelimit.redis_timeout, 100ms by default), its
// request is decided by the fallback of OnRedisError. After RedisFailures such failures in a row
// (ratelimit.redis_failures, 3 by default; the calls that fail together in one stall of Redis count once), the
// limiter switches every request to the fallback; one request per RedisBackoff (ratelimit.redis_backoff, 1s by
// default) then probes Redis, and only a probe that Redis answers switches back (health.go). The switch and the
// recovery are logged and counted. A Redis outage never becomes an error for callers:
//
//   - local (the configuration's default): each replica limits on its own at its share of each policy:
//     Limit/N per Period (Burst likewise, rounded up, at least 1), N the replicas it last counted, so that all of
//     them together stay within the policy. While Redis answers, every replica announces itself each second in
//     the sorted set reqgate:rl:replicas and counts the replicas announced in the last 5 s (presence.go); while
//     Redis is down it keeps the last count. Before its first count a replica assumes LocalReplicas. The local
//     state starts empty at the switch.
//   - allow: admit everything (fail open); decisions carry RateLimit-Policy but no RateLimit counts.
//   - deny: reject everything with Retry-After of RedisBackoff (fail closed).
//
// A stalled Redis may still run script calls that timed out on the client once it resumes, so a stall can
// over-count a little, never under-count. The go-redis client must have ContextTimeoutEnabled (RedisOptions sets
// it), or the socket ignores RedisTimeout.
//
// # Headers
//
// Decision.Policy and Decision.RateLimit are the values of the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-10, one list item per matching policy (see headers.go for r and t);
// RetryAfterSeconds gives Retry-After. The bodies of docs/api.md (Rate limits: the throttle error and
// rate_throttle_status) are the gateway's, which writes the HTTP answers.
//
// # Metrics
//
//	reqgate_ratelimit_decisions_total{result="admit|delay|reject"}
//	reqgate_ratelimit_redis_fallback_total             decisions made without Redis
//	reqgate_ratelimit_redis_errors_total               failed or slow script calls
//	reqgate_ratelimit_redis_switches_total{to="fallback|redis"}
//	reqgate_ratelimit_redis_up                         1 shared limits, 0 on the fallback
//	reqgate_ratelimit_replicas                         replicas last counted in Redis (the local fallback's N)
//	reqgate_ratelimit_held                             requests held for their slot now
//	reqgate_ratelimit_reject_cache_hits_total          rejections answered from the reject cache
//	reqgate_ratelimit_credit_hits_total                admissions on a credit, without Redis
//	reqgate_ratelimit_redis_duration_seconds           script round trips (Prometheus histogram)
package ratelimit
