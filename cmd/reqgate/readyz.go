package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/reqgate/reqgate/gateway"
)

// readyzChecks are the checks of the admin listener's /readyz that ?exclude=NAME leaves out, as the Kubernetes
// API server's /readyz?exclude= does. Excluding redis lets a gateway's start be gated on its core only: with
// ratelimit.on_redis_error local or allow it serves while Redis is down, so a startup probe that waited for Redis
// would keep a new replica restarting for as long as Redis is out.
var readyzChecks = map[string]func(error) bool{
	"redis": func(err error) bool { return errors.Is(err, gateway.ErrRedisNotReady) },
}

// readyzExclusions reads the exclude parameters (repeated, or comma-separated) of a /readyz request into the
// failures to leave out; nil without any. An unknown name is an error: a misspelt probe must not pass for one
// that checks less.
func readyzExclusions(q url.Values) (func(error) bool, error) {
	var checks []func(error) bool
	for _, v := range q["exclude"] {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			c, ok := readyzChecks[name]
			if !ok {
				known := make([]string, 0, len(readyzChecks))
				for k := range readyzChecks {
					known = append(known, k)
				}
				sort.Strings(known)
				return nil, fmt.Errorf("readyz: unknown check %q to exclude (known: %s)", name, strings.Join(known, ", "))
			}
			checks = append(checks, c)
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	return func(err error) bool {
		return slices.ContainsFunc(checks, func(c func(error) bool) bool { return c(err) })
	}, nil
}
