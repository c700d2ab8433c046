package ratelimit

import (
	"strconv"
	"strings"
	"time"
)

// headers.go formats the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10), one list item per
// matching policy:
//
//	RateLimit-Policy: "account";q=25;w=10, "per-ip";q=100;w=60
//	RateLimit: "account";r=12;t=6, "per-ip";r=99;t=1
//
// r is the number of requests that would still be admitted at once. t is the number of seconds (rounded up) until
// the quota is fully restored, or, when r is 0, until the next request fits, so that t equals Retry-After on a
// rejection caused by that policy. (With shaping, Retry-After is shorter than t by the policy's max_delay: a
// request arriving then is admitted after a hold.) Every matching policy is listed, not only the most restrictive,
// because every one of them must admit a request.

// Headers calls set for each response header of d: RateLimit-Policy and RateLimit when a policy matched (RateLimit
// only when counts are known), and Retry-After (whole seconds, rounded up, at least 1) when rejected.
func (d Decision) Headers(set func(name, value string)) {
	if !d.Limited {
		return
	}
	set("RateLimit-Policy", d.Policy)
	if v := d.RateLimit(); v != "" {
		set("RateLimit", v)
	}
	if !d.Allowed {
		set("Retry-After", strconv.Itoa(RetryAfterSeconds(d.RetryAfter)))
	}
}

// policyHeader is the RateLimit-Policy value for the matched rules.
func (l *Limiter) policyHeader(rules []*rule) string {
	if len(rules) == len(l.rules) && len(l.overrides) == 0 {
		return l.policyAll
	}
	if len(rules) == 1 {
		return rules[0].header
	}
	items := make([]string, len(rules))
	for i, r := range rules {
		items[i] = r.header
	}
	return strings.Join(items, ", ")
}

// RateLimit is the RateLimit value: one item per matching policy; "" when no counts are known.
func (d *Decision) RateLimit() string { return string(d.AppendRateLimit(nil)) }

// AppendRateLimit appends the RateLimit value to b (nothing when no counts are known).
func (d *Decision) AppendRateLimit(b []byte) []byte {
	c := &d.counts
	for i := range c.n {
		if i > 0 {
			b = append(b, ", "...)
		}
		r, st := c.at(i)
		b = append(b, r.quoted...)
		b = strconv.AppendInt(b, st.remaining, 10)
		b = append(b, ";t="...)
		b = strconv.AppendInt(b, ceilSeconds(time.Duration(st.reset)), 10)
	}
	return b
}

func (c *counts) set(rules []*rule, states []policyState) {
	c.n = len(rules)
	for i := range rules {
		if i < len(c.rules) {
			c.rules[i], c.states[i] = rules[i], states[i]
		} else {
			c.more = append(c.more, ruleState{rules[i], states[i]})
		}
	}
}

func (c *counts) at(i int) (*rule, policyState) {
	if i < len(c.rules) {
		return c.rules[i], c.states[i]
	}
	rs := c.more[i-len(c.rules)]
	return rs.rule, rs.state
}

// RetryAfterSeconds is the Retry-After value for d: whole seconds, rounded up, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	return int(max(1, ceilSeconds(d)))
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++ // no overflow near the largest Duration, unlike (d + time.Second - 1)
	}
	return s
}
