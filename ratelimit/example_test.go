package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reqgate/reqgate/ratelimit"
)

func ExampleLimiter_Admit() {
	// The values of the default configuration (package config) with one policy.
	l, err := ratelimit.New(ratelimit.Options{
		Policies: []ratelimit.Policy{
			{Name: "account", Key: ratelimit.KeyAPIKey, Limit: 25, Period: 10 * time.Second, Burst: 2},
		},
		OnRedisError: ratelimit.OnErrorLocal, RedisTimeout: 100 * time.Millisecond, RedisBackoff: time.Second,
		RedisFailures: 3, LocalReplicas: 1, MaxHeld: 256, RejectStatus: 429,
	})
	if err != nil {
		panic(err)
	}
	r := ratelimit.Request{APIKey: "acme-7f3a", User: "alice", IP: "192.0.2.1"}
	for range 3 {
		d := l.Admit(context.Background(), r)
		if !d.Allowed {
			fmt.Println(l.RejectStatus(), "Retry-After:", ratelimit.RetryAfterSeconds(d.RetryAfter))
			continue
		}
		fmt.Println("forward; RateLimit-Policy:", d.Policy, "RateLimit:", d.RateLimit())
	}
	// Output:
	// forward; RateLimit-Policy: "account";q=25;w=10 RateLimit: "account";r=1;t=1
	// forward; RateLimit-Policy: "account";q=25;w=10 RateLimit: "account";r=0;t=1
	// 429 Retry-After: 1
}
