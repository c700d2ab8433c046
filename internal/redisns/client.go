package redisns

import "github.com/redis/go-redis/v9"

// On is the namespace to name the keys and channels of ns in on rdb: ns itself on one node or a Sentinel
// group, ns as one hash tag on Redis Cluster (Clustered). Every package that names things in Redis goes through
// it, so a core and its gateways meet on the same names.
func On(rdb redis.UniversalClient, ns string) string {
	if IsCluster(rdb) {
		return Clustered(ns)
	}
	return ns
}

// IsCluster reports whether rdb is a Redis Cluster client: its pub/sub is sharded (SPUBLISH, SSUBSCRIBE).
func IsCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}
