package cache

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/redisns"
)

// Publisher sends purges on a namespace's channel (ChannelIn) from a process that caches nothing itself: the
// core of split mode, whose account changes (a changed password, a user locked or deleted) every gateway
// replica must hear at once instead of after its auth.ttl. A gateway reads them as it reads a RedisBus's
// purge: it drops the account's cached reads and remembered credentials. The Publisher does not subscribe, so
// nothing confirms delivery beyond Redis's acknowledgement of the PUBLISH (Redis has then queued the message
// to every subscriber).
type Publisher struct {
	rdb     redis.UniversalClient
	channel string
	sharded bool // Redis Cluster: SPUBLISH (see RedisBus)
	origin  string
	seq     atomic.Uint64
}

// NewPublisher publishes on rdb, which the caller closes, on the channel of the namespace ns (a namespace
// redisns.Check accepts): the gateways' redis.namespace, so that its purges reach them and no other deployment.
func NewPublisher(rdb redis.UniversalClient, ns string) *Publisher {
	return &Publisher{rdb: rdb, channel: ChannelIn(redisns.On(rdb, ns)), sharded: redisns.IsCluster(rdb),
		origin: newOrigin()}
}

// Purge asks every gateway replica on the bus to drop the account's cached reads and remembered credentials,
// and returns when Redis has acknowledged it, or the error when ctx ended first or Redis refused it.
func (p *Publisher) Purge(ctx context.Context, account string) error {
	msg := busMessage(p.origin, p.seq.Add(1), "", purgePrefix+account)
	if err := publish(ctx, p.rdb, p.sharded, p.channel, msg).Err(); err != nil {
		return fmt.Errorf("cache: publish the purge of account %q: %w", account, err)
	}
	return nil
}
