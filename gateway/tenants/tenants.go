// Package tenants counts the requests of the busiest accounts, each under its own `account` label, and those of
// every other account together under account="other", so that a shared gateway can say which tenant its traffic,
// errors, throttling and cache hits come from without a series per account.
//
// Which accounts are the busiest is decided by a Space-Saving summary (Metwally, Agrawal and El Abbadi, 2005)
// of the accounts outside the top, with counts that decay by half every Interval: the top is K accounts with
// series of their own, and every Interval a candidate whose guaranteed count exceeds the weakest one's by a
// quarter takes its place. The first K accounts seen take the free places at once, so a deployment with K
// accounts or fewer sees each of them from its first request. A demoted account's series are removed (their
// counts stop; Prometheus marks them stale) and its requests count under "other" from then on; "other" only
// grows. At most K+1 accounts have series at any time, whatever the number of accounts.
//
// The hot path is an atomic load and a map lookup for an account of the top, plus a short critical section for
// any other; neither allocates once the summary is warm.
package tenants

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/internal/striped"
)

// Other is the account label of the requests of every account outside the top. An account whose api_key is
// "other" is never given series of its own, so the label means one thing.
const Other = "other"

// Interval is how often the top is reconsidered, and the half-life of the counts it is decided on.
const Interval = 10 * time.Second

// maxKey is the longest api_key (internal/wire): a longer one is counted under "other" without being tracked.
const maxKey = 128

// Families of the series, by account.
const (
	FamilyRequests  = "reqgate_gateway_account_requests_total"
	FamilyErrors    = "reqgate_gateway_account_errors_total"
	FamilyThrottled = "reqgate_gateway_account_throttled_total"
	FamilyHits      = "reqgate_gateway_account_cache_hits_total"
)

// Outcome is what the accounting of one request needs to know of it.
type Outcome struct {
	Status    int  // the status the caller got
	Hit       bool // answered from the cache
	Throttled bool // refused by a rate policy
}

// series are the counters of one account (or of "other").
// The counters are striped (internal/striped): a busy tenant's requests run on every CPU at once, and one
// atomic for all of them would move its cache line between the CPUs on every request.
type series struct {
	account                         string
	label                           string // `account="..."`
	requests, e4xx, e5xx, thr, hits striped.Counter
	seen                            uint64  // requests at the last rebalance (under Tracker.mu)
	score                           float64 // decayed requests (under Tracker.mu)
}

func (s *series) count(stripe uint32, o Outcome) {
	s.requests.Inc(stripe)
	switch {
	case o.Status >= 500:
		s.e5xx.Inc(stripe)
	case o.Status >= 400:
		s.e4xx.Inc(stripe)
	}
	if o.Throttled {
		s.thr.Inc(stripe)
	}
	if o.Hit {
		s.hits.Inc(stripe)
	}
}

// candidate is an account of the Space-Saving summary: its key lives in buf, so that replacing one allocates
// nothing.
type candidate struct {
	key string // over buf
	buf [maxKey]byte
	n   float64 // the summary's (decayed) count: at most err above the account's true count
	err float64
}

func (c *candidate) setKey(k string) {
	n := copy(c.buf[:], k)
	c.key = unsafe.String(&c.buf[0], n)
}

// Tracker counts requests by account. A nil *Tracker counts nothing. It is safe for concurrent use.
type Tracker struct {
	k     int
	set   *metrics.Set
	other *series
	top   atomic.Pointer[map[string]*series]
	next  atomic.Int64 // unix nanoseconds of the next rebalance; 0 before the first request

	mu    sync.Mutex
	cands []candidate    // the summary; never grows past its capacity, so keys stay put
	index map[string]int // account -> its place in cands
}

// New returns a Tracker of the k busiest accounts (k >= 1), its series in a set of its own (Set).
func New(k int) *Tracker {
	t := &Tracker{k: k, set: metrics.NewSet(), index: make(map[string]int)}
	t.set.RegisterMetricsWriter(t.writeSeries)
	t.cands = make([]candidate, 0, max(4*k, 32))
	t.other = t.newSeries(Other)
	top := make(map[string]*series, k)
	t.top.Store(&top)
	return t
}

// Set is the metrics set of the tracker's series, to be registered for exposition (metrics.RegisterSet).
func (t *Tracker) Set() *metrics.Set { return t.set }

// WritePrometheus writes the tracker's series in the Prometheus text format.
func (t *Tracker) WritePrometheus(w io.Writer) { t.set.WritePrometheus(w) }

// Count counts a request of account that ended at now with o, on stripe (the request's connection's, see
// internal/striped). account must be one the gateway has proved the caller belongs to: it becomes a label value.
func (t *Tracker) Count(stripe uint32, account string, now time.Time, o Outcome) {
	if t == nil {
		return
	}
	s, ok := (*t.top.Load())[account]
	if !ok {
		s = t.observe(account)
	}
	s.count(stripe, o)
	if at := now.UnixNano(); at >= t.next.Load() {
		t.rebalance(at)
	}
}

// observe counts a request of an account outside the top in the summary, and returns the series it counts
// under: its own when a free place of the top took it, else "other".
func (t *Tracker) observe(account string) *series {
	t.mu.Lock()
	defer t.mu.Unlock()
	top := *t.top.Load()
	if s, ok := top[account]; ok { // promoted meanwhile
		return s
	}
	if account == Other || len(account) > maxKey || account == "" {
		return t.other
	}
	if len(top) < t.k {
		s := t.newSeries(account)
		t.publish(func(m map[string]*series) { m[s.account] = s })
		return s
	}
	if i, ok := t.index[account]; ok {
		t.cands[i].n++
		return t.other
	}
	if len(t.cands) < cap(t.cands) {
		t.cands = t.cands[:len(t.cands)+1]
		c := &t.cands[len(t.cands)-1]
		c.setKey(account)
		c.n, c.err = 1, 0
		t.index[c.key] = len(t.cands) - 1
		return t.other
	}
	// Space-Saving: the newcomer takes the place of the least counted, inheriting its count as its error.
	m := 0
	for i := range t.cands {
		if t.cands[i].n < t.cands[m].n {
			m = i
		}
	}
	c := &t.cands[m]
	delete(t.index, c.key)
	c.setKey(account)
	c.err = c.n
	c.n++
	t.index[c.key] = m
	return t.other
}

// rebalance decays the counts and lets the candidates that are now busier than the weakest of the top take
// their places. One caller runs it per Interval.
func (t *Tracker) rebalance(at int64) {
	next := t.next.Load()
	if at < next || !t.next.CompareAndSwap(next, at+int64(Interval)) {
		return
	}
	if next == 0 {
		return // the first request starts the clock
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	top := *t.top.Load()
	for _, s := range top {
		n := s.requests.Load()
		s.score = s.score/2 + float64(n-s.seen)
		s.seen = n
	}
	for i := range t.cands {
		t.cands[i].n /= 2
		t.cands[i].err /= 2
	}
	var promote, demote []*series
	taken := map[string]bool{}
	for range t.k {
		// The weakest of the top not yet demoted, and the candidate with the highest guaranteed count.
		var weak *series
		for _, s := range top {
			if !taken[s.account] && (weak == nil || s.score < weak.score) {
				weak = s
			}
		}
		best := -1
		for i := range t.cands {
			if best < 0 || t.cands[i].n-t.cands[i].err > t.cands[best].n-t.cands[best].err {
				best = i
			}
		}
		if weak == nil || best < 0 {
			break
		}
		c := &t.cands[best]
		if sure := c.n - c.err; sure <= weak.score*1.25+1 {
			break
		}
		s := t.newSeries(c.key)
		s.score = c.n - c.err
		taken[weak.account], taken[s.account] = true, true
		promote, demote = append(promote, s), append(demote, weak)
		// The demoted account takes the candidate's place in the summary, with its count.
		delete(t.index, c.key)
		c.setKey(weak.account)
		c.n, c.err = weak.score, 0
		t.index[c.key] = best
	}
	if len(promote) == 0 {
		return
	}
	t.publish(func(m map[string]*series) {
		for _, s := range demote {
			delete(m, s.account)
		}
		for _, s := range promote {
			m[s.account] = s
		}
	})
}

// publish replaces the top by a copy changed by edit (under mu). Readers of the old map may still count a
// request or two in a demoted account's series, which is no longer exposed: never in another account's.
func (t *Tracker) publish(edit func(map[string]*series)) {
	old := *t.top.Load()
	m := make(map[string]*series, t.k)
	for k, v := range old {
		m[k] = v
	}
	edit(m)
	t.top.Store(&m)
}

// newSeries makes the series of account (copied: the caller's string may be a request's buffer).
func (t *Tracker) newSeries(account string) *series {
	a := string(append([]byte(nil), account...))
	return &series{account: a, label: `account=` + strconv.Quote(a)}
}

// writeSeries writes the series of the top and of "other", by family, each family's accounts sorted. A
// demoted account's series are no longer written.
func (t *Tracker) writeSeries(w io.Writer) {
	all := []*series{t.other}
	for _, s := range *t.top.Load() {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b *series) int { return strings.Compare(a.account, b.account) })
	families := []struct {
		name, extra string
		value       func(s *series) uint64
	}{
		{FamilyRequests, "", func(s *series) uint64 { return s.requests.Load() }},
		{FamilyErrors, `,class="4xx"`, func(s *series) uint64 { return s.e4xx.Load() }},
		{FamilyErrors, `,class="5xx"`, func(s *series) uint64 { return s.e5xx.Load() }},
		{FamilyThrottled, "", func(s *series) uint64 { return s.thr.Load() }},
		{FamilyHits, "", func(s *series) uint64 { return s.hits.Load() }},
	}
	for i, f := range families {
		if i == 0 || families[i-1].name != f.name {
			metrics.WriteMetadataIfNeeded(w, f.name, "counter")
		}
		for _, s := range all {
			fmt.Fprintf(w, "%s{%s%s} %d\n", f.name, s.label, f.extra, f.value(s))
		}
	}
}

// Accounts are the accounts with series of their own now, for tests.
func (t *Tracker) Accounts() []string {
	var a []string
	for k := range *t.top.Load() {
		a = append(a, k)
	}
	return a
}
