// Package redisns is the one rule of a Redis namespace (redis.namespace): which names are namespaces, and how a
// name reqgate uses in Redis (a key or a pub/sub channel) is put in one. The gateway's packages and the core's
// publisher share it, so that a core and its gateways meet on the same channel.
//
// Deployments on one Redis server are kept apart by their namespaces alone: a database number separates keys,
// but Redis pub/sub ignores it, so two deployments on databases 0 and 2 would still hear each other's purges.
package redisns

import (
	"errors"
	"fmt"
)

// MaxLen bounds a namespace: it is sent with every key of every request the gateway counts.
const MaxLen = 64

// Check returns why ns cannot be a namespace, or nil. The empty namespace is valid: it keeps the names as they
// are. Otherwise 1 to MaxLen ASCII letters, digits, '-', '_' and '.': no ':' (the separator: a namespaced
// name starts with its namespace and the first ':', so two namespaces never share a name), no glob characters
// (so the Redis ACL patterns ~alpha:* and &alpha:* grant exactly one namespace), no spaces or control
// characters.
func Check(ns string) error {
	if ns == "" {
		return nil
	}
	if len(ns) > MaxLen {
		return fmt.Errorf("%d characters: at most %d", len(ns), MaxLen)
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return errors.New("only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

// Name is name in the namespace ns: name itself in the empty namespace, else "<ns>:<name>".
func Name(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + ":" + name
}

// Clustered is the namespace to name things in on Redis Cluster instead of ns: ns in braces ("reqgate" for the
// empty one), so that Name puts the namespace first as one hash tag ("{alpha}:reqgate:rl:...",
// "{reqgate}:reqgate:inval"). Every name of a deployment then falls in one hash slot: a Lua script may touch any
// of its keys at once (a rate-limit decision checks every matching policy atomically), and its pub/sub channels
// are ordered by one shard. The price is that a deployment's keys and channels live on one shard of the
// cluster. Deployments sharing a cluster still share nothing: a namespace has no braces, so "{alpha}:" starts
// no name of another.
func Clustered(ns string) string {
	if ns == "" {
		ns = "reqgate"
	}
	return "{" + ns + "}"
}
