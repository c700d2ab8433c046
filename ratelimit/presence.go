package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/redisns"
)

// presence.go counts the gateway replicas that share the limits, for the local fallback: while Redis is down each
// replica admits 1/count of each policy, so that all of them together stay within it. While Redis answers, every
// replica announces itself each presenceEvery in one sorted set (member: its id, score: the Redis time of its
// last announcement) and counts the members announced within presenceTTL, in one script; while Redis does not
// answer, the replica keeps the last count it saw. Until its first count it assumes Options.LocalReplicas.

const (
	presenceKey     = "reqgate:rl:replicas" // in the namespace; no policy key is this (theirs go on with ":<kind>:")
	presenceEvery   = time.Second
	presenceTTL     = 5 * time.Second // a replica silent this long is no longer counted
	presenceTimeout = time.Second     // one announcement; off the request path, so longer than RedisTimeout
)

// presenceScript announces ARGV[1] and returns how many replicas announced themselves within ARGV[2] ms.
var presenceScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call("ZADD", KEYS[1], now, ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - ttl)
redis.call("PEXPIRE", KEYS[1], ttl)
return redis.call("ZCARD", KEYS[1])
`)

// presence is this replica's announcement and the count of replicas it last saw.
type presence struct {
	rdb   redis.UniversalClient
	key   string // presenceKey in the limiter's namespace
	id    string
	log   *slog.Logger
	count atomic.Int64 // replicas last counted (this one included); LocalReplicas before the first count
	seen  atomic.Bool  // count came from Redis
}

// presences holds the presence of each Redis client in each namespace (presenceOf -> *presence): one per client
// and namespace, so that the limiters a process builds on one client (at a reload, say) announce one replica, not
// one each, while limiters of two namespaces count their own replicas.
var presences sync.Map

type presenceOf struct {
	rdb redis.UniversalClient
	ns  string
}

// startPresence returns the presence of this replica on rdb in the namespace ns, started if need be: it
// announces the replica until the client is closed (the Limiter has no Close of its own: the caller's client
// bounds its life), counting from assumed until the first answer.
func startPresence(rdb redis.UniversalClient, ns string, assumed int, log *slog.Logger) *presence {
	of := presenceOf{rdb: rdb, ns: ns}
	if p, ok := presences.Load(of); ok {
		return p.(*presence)
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	p := &presence{rdb: rdb, key: redisns.Name(ns, presenceKey), id: hex.EncodeToString(b[:]), log: log}
	p.count.Store(int64(assumed))
	if prev, loaded := presences.LoadOrStore(of, p); loaded {
		return prev.(*presence)
	}
	replicasGauge.Set(float64(assumed))
	go p.run(of)
	return p
}

// replicas is the number of replicas sharing the limits, as last seen.
func (p *presence) replicas() int64 { return p.count.Load() }

func (p *presence) run(of presenceOf) {
	t := time.NewTicker(presenceEvery)
	defer t.Stop()
	for {
		if err := p.announce(); errors.Is(err, redis.ErrClosed) {
			presences.Delete(of)
			return
		}
		<-t.C
	}
}

// announce announces this replica once and takes the count; on failure the last count stays.
func (p *presence) announce() error {
	ctx, cancel := context.WithTimeout(context.Background(), presenceTimeout)
	defer cancel()
	n, err := presenceScript.Run(ctx, p.rdb, []string{p.key}, p.id, presenceTTL.Milliseconds()).Int64()
	if err != nil {
		return err
	}
	n = max(n, 1)
	if old := p.count.Swap(n); old != n || !p.seen.Load() {
		p.log.Info("ratelimit: replicas sharing the limits", "replicas", n, "before", old)
	}
	p.seen.Store(true)
	replicasGauge.Set(float64(n))
	return nil
}
