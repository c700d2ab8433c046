package config_test

import (
	"fmt"

	"github.com/reqgate/reqgate/config"
)

// Load takes the role, the arguments after it and the environment; a flag beats the environment, which beats
// the --config file, which beats the defaults.
func ExampleLoad() {
	cfg, err := config.Load("gateway",
		[]string{"--upstream", "http://core-a:8081,http://core-b:8081", "--set", "cache.ttl=10s"},
		[]string{"REQGATE_CACHE_TTL=1m", "REQGATE_REDIS_URL=redis://:secret@redis:6379/0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Upstream.URLs(), cfg.Cache.TTL, cfg.Source("cache.ttl"), cfg.Source("redis.url"))
	// Output: [http://core-a:8081 http://core-b:8081] 10s flag --set cache.ttl env REQGATE_REDIS_URL
}

// Every refusal names its source, the key path and the reason.
func ExampleLoad_refused() {
	_, err := config.Load("core", []string{"--listen", "8081", "--set", "ratelimit.reject_status=418"}, nil)
	fmt.Println(err)
	// Output:
	// flag --listen: listen: bad listen address "8081": want host:port, e.g. 127.0.0.1:8080 or :8080
	// flag --set ratelimit.reject_status: ratelimit.reject_status: must be 429 or 503, not 418
}
