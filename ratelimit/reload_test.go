package ratelimit

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWithPoliciesKeepsCounts replaces the policies of a limiter that has already admitted requests: the new
// policies apply at once and count on from what the old limiter admitted, so a tightened policy limits a
// caller that used it, and a new override takes effect.
func TestWithPoliciesKeepsCounts(t *testing.T) { eachBackend(t, testWithPoliciesKeepsCounts) }

func testWithPoliciesKeepsCounts(t *testing.T, backend string) {
	old := newLimiter(t, backend, Options{
		Policies: []Policy{{Name: "account", Key: KeyAPIKey, Limit: 10, Burst: 10, Period: time.Hour}},
	})
	if got, _ := admitN(old, Request{APIKey: "a"}, 4); got != 4 {
		t.Fatalf("old policy admitted %d of 4", got)
	}
	tests := []struct {
		name      string
		policies  []Policy
		overrides []Override
		key       string
		want      int    // admitted of 6 under the new policies
		policy    string // RateLimit-Policy of the last decision
	}{
		// The four requests took four tenths of the hour: two of the five of the tightened policy, so three
		// more pass (a fresh count would let five through).
		{"tightened", []Policy{{Name: "account", Key: KeyAPIKey, Limit: 5, Burst: 5, Period: time.Hour}}, nil, "a", 3, `"account";q=5;w=3600`},
		// An override of the same policy for another key counts that key alone.
		{"override", []Policy{{Name: "account", Key: KeyAPIKey, Limit: 5, Burst: 5, Period: time.Hour}},
			[]Override{{APIKey: "b", Policy: "account", Limit: 2, Burst: 2, Period: time.Hour}}, "b", 2, `"account";q=2;w=3600`},
		// A policy of a new name starts counting from nothing.
		{"renamed", []Policy{{Name: "other", Key: KeyAPIKey, Limit: 3, Burst: 3, Period: time.Hour}}, nil, "a", 3, `"other";q=3;w=3600`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := old.WithPolicies(tt.policies, tt.overrides)
			if err != nil {
				t.Fatal(err)
			}
			// Through a Memo the old limiter filled, as a keep-alive connection across the reload asks.
			m := new(Memo)
			old.Status(context.Background(), Request{APIKey: tt.key, Memo: m})
			got, last := admitN(l, Request{APIKey: tt.key, Memo: m}, 6)
			if got != tt.want {
				t.Errorf("admitted %d of 6, want %d", got, tt.want)
			}
			if last.Policy != tt.policy {
				t.Errorf("RateLimit-Policy %q, want %q", last.Policy, tt.policy)
			}
		})
	}
}

// TestWithPoliciesRefuses gives WithPolicies what New refuses: the error names the fault and the old limiter
// keeps its policy.
func TestWithPoliciesRefuses(t *testing.T) {
	old := mustNew(t, Options{Policies: []Policy{{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour}}})
	tests := []struct {
		name      string
		policies  []Policy
		overrides []Override
		want      string
	}{
		{"bad key", []Policy{{Name: "account", Key: "host", Limit: 2, Burst: 2, Period: time.Hour}}, nil, `key "host"`},
		{"unknown policy", []Policy{{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour}},
			[]Override{{APIKey: "b", Policy: "nope", Limit: 1, Burst: 1, Period: time.Hour}}, `unknown policy "nope"`},
		{"twice", []Policy{{Name: "a", Key: KeyIP, Limit: 1, Burst: 1, Period: time.Second}, {Name: "a", Key: KeyIP, Limit: 1, Burst: 1, Period: time.Second}}, nil, "defined twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := old.WithPolicies(tt.policies, tt.overrides); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one containing %q", err, tt.want)
			}
			if got, _ := admitN(old, Request{APIKey: "k-" + tt.name}, 3); got != 2 {
				t.Errorf("old limiter admitted %d of 3, want 2", got)
			}
		})
	}
}

// TestWithPoliciesShaping switches shaping on: a request over the rate is then held instead of rejected.
func TestWithPoliciesShaping(t *testing.T) {
	old := mustNew(t, Options{Policies: []Policy{{Name: "p", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Hour}}})
	if got, _ := admitN(old, Request{APIKey: "s"}, 2); got != 1 {
		t.Fatalf("old policy admitted %d of 2, want 1", got)
	}
	l, err := old.WithPolicies([]Policy{{Name: "p", Key: KeyAPIKey, Limit: 1000, Period: time.Second, Burst: 1, MaxDelay: time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !l.shaping {
		t.Fatal("the new limiter does not shape")
	}
	if got, _ := admitN(l, Request{APIKey: "t"}, 3); got != 3 {
		t.Errorf("shaped policy admitted %d of 3 back-to-back requests, want 3 (held for their slots)", got)
	}
}
