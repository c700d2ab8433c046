package ratelimit

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 1}, {0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {90 * time.Second, 90},
	}
	for _, tt := range tests {
		if got := RetryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestDecisionHeaders(t *testing.T) {
	a := &rule{quoted: `"a";r=`}
	withCounts := func(d Decision, remaining int64, reset time.Duration) Decision {
		d.counts.set([]*rule{a}, []policyState{{remaining: remaining, reset: int64(reset)}})
		return d
	}
	tests := []struct {
		name string
		d    Decision
		want string
	}{
		{"no policy", Decision{Allowed: true}, ""},
		{"admitted", withCounts(Decision{Allowed: true, Limited: true, Policy: `"a";q=1;w=1`}, 0, time.Second),
			`RateLimit-Policy: "a";q=1;w=1|RateLimit: "a";r=0;t=1|`},
		{"rejected", withCounts(Decision{Limited: true, Policy: `"a";q=1;w=1`, RetryAfter: 2500 * time.Millisecond}, 0, 2500*time.Millisecond),
			`RateLimit-Policy: "a";q=1;w=1|RateLimit: "a";r=0;t=3|Retry-After: 3|`},
		{"fallback allow: no counts", Decision{Allowed: true, Limited: true, Policy: `"a";q=1;w=1`},
			`RateLimit-Policy: "a";q=1;w=1|`},
	}
	for _, tt := range tests {
		var got strings.Builder
		tt.d.Headers(func(k, v string) { got.WriteString(k + ": " + v + "|") })
		if got.String() != tt.want {
			t.Errorf("%s: headers %q, want %q", tt.name, got.String(), tt.want)
		}
	}
	// More policies than a Decision holds inline.
	var d Decision
	rules, states := make([]*rule, 10), make([]policyState, 10)
	for i := range rules {
		rules[i], states[i] = &rule{quoted: `"p` + strconv.Itoa(i) + `";r=`}, policyState{remaining: int64(i)}
	}
	d.counts.set(rules, states)
	if got := d.RateLimit(); strings.Count(got, ";r=") != 10 || !strings.HasSuffix(got, `"p9";r=9;t=0`) {
		t.Errorf("ten policies: %s", got)
	}
}
