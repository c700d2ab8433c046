package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// ParseTTLByRoute reads cache.ttl_by_route: "class=duration" items, each class one of route.CachedClasses (the
// cacheable routes of the route table), named once, with a duration > 0 and no longer than ttl (cache.ttl, the
// longest any entry is kept).
func ParseTTLByRoute(items []string, ttl time.Duration) (map[route.Class]time.Duration, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := make(map[route.Class]time.Duration, len(items))
	for _, it := range items {
		name, value, ok := strings.Cut(it, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok {
			return nil, fmt.Errorf("%q: want class=duration, e.g. record=10s", it)
		}
		class, ok := route.CachedClass(name)
		if !ok {
			return nil, fmt.Errorf("%q: unknown route class %q (one of %s)", it, name,
				strings.Join(route.CachedClasses(), ", "))
		}
		if _, dup := out[class]; dup {
			return nil, fmt.Errorf("%q: route class %s named twice", it, name)
		}
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q: want a duration > 0, e.g. 10s", it)
		}
		if ttl > 0 && d > ttl {
			return nil, fmt.Errorf("%q: longer than cache.ttl (%s), the longest an entry is kept", it, ttl)
		}
		out[class] = d
	}
	return out, nil
}
