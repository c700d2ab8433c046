package ratelimit

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
)

// The in-process store decides a request of one GCRA key through a Memo that knows the key's cell without a
// lock (local.go); these tests hold it to the locked decisions' exactness.

// TestLocalConcurrentExact has many connections (goroutines, each with its own Memo) ask for one api_key at
// once, at a fixed time, so that the policy's burst is all there is: exactly the limit is admitted. In the mixed
// form some requests also carry a user's key (a second GCRA policy) or a client IP's (a window policy), which are
// decided under the shards' locks while the others go lock-free on the shared key, and Status calls, which count
// nothing, run among them; the shared key still admits exactly its limit.
func TestLocalConcurrentExact(t *testing.T) {
	t.Parallel()
	const limit, conns, each = 50_000, 8, 8000
	at := time.Unix(1_800_000_000, 0)
	account := Policy{Name: "account", Key: KeyAPIKey, Limit: limit, Burst: limit, Period: time.Hour}
	perUser := Policy{Name: "per-user", Key: KeyUser, Limit: 1_000_000, Burst: 1_000_000, Period: time.Second}
	perIP := Policy{Name: "per-ip", Key: KeyIP, Algorithm: AlgorithmWindow, Limit: MaxWindowLimit,
		Burst: MaxWindowLimit, Period: time.Second}
	for _, tc := range []struct {
		name     string
		policies []Policy
		mixed    bool
	}{
		{"one key", []Policy{account}, false},
		{"mixed", []Policy{account, perUser, perIP}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := mustNew(t, Options{Policies: tc.policies, Now: func() time.Time { return at }})
			var admitted atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{}) // all at once: the connections meet on the key
			for c := range conns {
				wg.Go(func() {
					m := new(Memo)
					<-start
					for i := range each {
						r := Request{APIKey: "shared", Memo: m}
						if tc.mixed {
							switch i % 8 {
							case 1:
								r = Request{APIKey: "shared", User: "u" + strconv.Itoa(c)}
							case 2:
								r = Request{APIKey: "shared", IP: "10.0.0." + strconv.Itoa(c)}
							case 3:
								l.Status(context.Background(), Request{APIKey: "shared", Memo: m})
							}
						}
						if l.Admit(context.Background(), r).Allowed {
							admitted.Add(1)
						}
					}
				})
			}
			close(start)
			wg.Wait()
			if got := admitted.Load(); got != limit {
				t.Errorf("admitted %d of %d requests, want exactly the limit %d", got, conns*each, limit)
			}
		})
	}
}

// TestLocalSweptCell: once the sweeper has dropped an idle key, a Memo that still holds the key's old cell
// counts its next requests in the key's new cell, with everyone else's, so the limit holds across the sweep.
func TestLocalSweptCell(t *testing.T) {
	t.Parallel()
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := mustNew(t, Options{Now: clk.Now,
		Policies: []Policy{{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Second}}})
	ctx := context.Background()
	var m, other Memo
	if got, _ := admitN(l, Request{APIKey: "k", Memo: &m}, 2); got != 2 {
		t.Fatalf("admitted %d of the burst of 2", got)
	}
	old := m.local.cell
	clk.Add(2 * sweepEvery)             // the key is idle, and its shard due for a sweep
	l.Status(ctx, Request{APIKey: "k"}) // a decision under the shard's lock sweeps it
	if got := old.tat.Load(); got != cellDead {
		t.Errorf("the idle key's cell holds %d after the sweep, want it dead", got)
	}
	for i, tc := range []struct {
		memo *Memo
		want bool
	}{{&m, true}, {&other, true}, {&m, false}, {&other, false}} {
		if got := l.Admit(ctx, Request{APIKey: "k", Memo: tc.memo}).Allowed; got != tc.want {
			t.Errorf("request %d after the sweep: allowed %v, want %v (burst 2, counted across Memos)", i, got, tc.want)
		}
	}
	if m.local.cell == old || m.local.cell != other.local.cell {
		t.Error("the Memos do not share the key's new cell")
	}
}
