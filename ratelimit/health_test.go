package ratelimit

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// These tests check when the limiter switches to its fallback and back, against a real redis-server: a Redis
// that fails now and then must not move the replicas off their shared limits, one that keeps failing must, and
// only an answer to a probe brings them back.

const switched, restored = "switching to the fallback", "Redis is back"

// healthLimiter is a limiter on srv that switches after 3 failures in a row and would probe again only after an
// hour (a test makes the probe due with probeNow), logging to logs.
func healthLimiter(t *testing.T, srv *redistest.Server, timeout time.Duration, logs *testsupport.LockedBuffer) *Limiter {
	t.Helper()
	return replicas(t, srv, 1, Options{
		Policies:     []Policy{{Name: "account", Key: KeyAPIKey, Limit: 1000, Burst: 1000, Period: time.Hour}},
		RedisTimeout: timeout, RedisBackoff: time.Hour, RedisFailures: 3, NoAutoPipeline: true,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})[0]
}

// breakKey makes every script call on the account key of apiKey fail at once (WRONGTYPE: the key holds a hash),
// as a Redis error would, while Redis answers everything else.
func breakKey(t *testing.T, srv *redistest.Server, apiKey string) {
	t.Helper()
	if err := newClient(t, srv).HSet(context.Background(), "reqgate:rl:account:k:"+apiKey, "x", "1").Err(); err != nil {
		t.Fatal(err)
	}
}

// probeNow makes l's next call to Redis the probe, as if the back-off had passed.
func probeNow(l *Limiter) { l.store.(*fallbackStore).health.probeAt.Store(0) }

func fromRedis(t *testing.T, l *Limiter, apiKey string) bool {
	t.Helper()
	return !l.Admit(context.Background(), Request{APIKey: apiKey}).Fallback
}

// TestFailuresInARowSwitch: a failed call is decided by the fallback, but only the third failure in a row switches
// every request to it; an answer between failures starts the count again.
func TestFailuresInARowSwitch(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testsupport.LockedBuffer
	l := healthLimiter(t, srv, testRedisTimeout, &logs)
	breakKey(t, srv, "bad")
	for i := range 2 {
		if fromRedis(t, l, "bad") {
			t.Fatalf("failed call %d not decided by the fallback", i+1)
		}
	}
	if !fromRedis(t, l, "good") {
		t.Fatalf("after 2 failures in a row the limiter switched to the fallback:\n%s", logs.String())
	}
	for i := range 2 {
		fromRedis(t, l, "bad")
		if strings.Contains(logs.String(), switched) {
			t.Fatalf("switched after %d failures following an answer, want 3:\n%s", i+1, logs.String())
		}
	}
	fromRedis(t, l, "bad")
	if !strings.Contains(logs.String(), switched) {
		t.Fatalf("3 failures in a row did not switch to the fallback:\n%s", logs.String())
	}
	if fromRedis(t, l, "good") {
		t.Error("switched, yet a request was decided by Redis before the probe was due")
	}
}

// TestOneStallDoesNotSwitch stalls Redis once under concurrent requests: every call in flight times out together,
// each decided by the fallback, but they are one failure, not many, and the limiter stays on Redis.
func TestOneStallDoesNotSwitch(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testsupport.LockedBuffer
	l := healthLimiter(t, srv, time.Second, &logs)
	waitShared(t, l)
	srv.Pause(t)
	var wg sync.WaitGroup
	start := make(chan struct{})
	fell := make([]bool, 8)
	for i := range fell {
		wg.Go(func() {
			<-start
			fell[i] = !fromRedis(t, l, "k"+strconv.Itoa(i))
		})
	}
	close(start)
	wg.Wait()
	srv.Resume(t)
	for i, f := range fell {
		if !f {
			t.Errorf("request %d during the stall not decided by the fallback", i)
		}
	}
	if !fromRedis(t, l, "after") {
		t.Errorf("one stall of Redis switched the limiter to the fallback:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), switched) {
		t.Errorf("log reports a switch after one stall:\n%s", logs.String())
	}
}

// TestRecoveryNeedsProbe: once switched, an answer to a call sent before the switch does not switch back, nor does
// Redis answering again; the probe does when Redis answers it, and a failed probe keeps the fallback.
func TestRecoveryNeedsProbe(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var logs testsupport.LockedBuffer
	l := healthLimiter(t, srv, testRedisTimeout, &logs)
	breakKey(t, srv, "bad")
	admin := newClient(t, srv)
	ctx := context.Background()
	waitShared(t, l)

	// A write call held by CLIENT PAUSE WRITE is in flight while read-only calls (Status: EVALSHA_RO) fail
	// and switch the limiter; then it is answered.
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "60000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	held := make(chan Decision, 1)
	go func() { held <- l.Admit(ctx, Request{APIKey: "held"}) }()
	waitBlocked(t, admin)
	for range 3 {
		l.Status(ctx, Request{APIKey: "bad"})
	}
	if !strings.Contains(logs.String(), switched) {
		t.Fatalf("3 failures in a row did not switch:\n%s", logs.String())
	}
	if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	if d := <-held; d.Fallback {
		t.Fatal("the held call was not decided by Redis: the test did not hold it")
	}
	for i := range 3 {
		if fromRedis(t, l, "k"+strconv.Itoa(i)) {
			t.Fatalf("request %d decided by Redis before any probe: a late answer or a healthy Redis ended the switch:\n%s",
				i, logs.String())
		}
	}

	// A failed probe keeps the fallback, and the next probe waits for the back-off again.
	probeNow(l)
	if fromRedis(t, l, "bad") {
		t.Fatal("the failed probe was decided by Redis")
	}
	if fromRedis(t, l, "good") {
		t.Fatalf("a failed probe ended the switch:\n%s", logs.String())
	}

	probeNow(l)
	if !fromRedis(t, l, "good") {
		t.Fatal("the probe Redis answered was not decided by Redis")
	}
	if !fromRedis(t, l, "good2") || !strings.Contains(logs.String(), restored) {
		t.Fatalf("the answered probe did not switch back to Redis:\n%s", logs.String())
	}
}

// waitBlocked waits until Redis holds a client's command under CLIENT PAUSE (counted in blocked_clients).
func waitBlocked(t *testing.T, admin *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := admin.Info(context.Background(), "clients").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "blocked_clients:") && !strings.Contains(info, "blocked_clients:0\r") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call held by CLIENT PAUSE within 10s:\n%s", info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
