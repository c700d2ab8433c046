package tenants

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// values are the tracker's series as exposed, by name and labels.
func values(t *testing.T, tr *Tracker) map[string]float64 {
	t.Helper()
	var buf bytes.Buffer
	tr.WritePrometheus(&buf)
	m := map[string]float64{}
	for line := range strings.Lines(buf.String()) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		f, err := strconv.ParseFloat(strings.TrimSpace(line[i+1:]), 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		m[line[:i]] = f
	}
	return m
}

// labelled are the account labels of the exposed series.
func labelled(t *testing.T, tr *Tracker) []string {
	t.Helper()
	var a []string
	for name := range values(t, tr) {
		_, rest, _ := strings.Cut(name, `account="`)
		acc, _, _ := strings.Cut(rest, `"`)
		if !slices.Contains(a, acc) {
			a = append(a, acc)
		}
	}
	slices.Sort(a)
	return a
}

func requests(account string) string { return FamilyRequests + `{account="` + account + `"}` }

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// The first K accounts get series of their own from their first request; the others count as "other". Every
// outcome goes to its counter.
func TestCountsByAccount(t *testing.T) {
	tr := New(2)
	ok := Outcome{Status: 200}
	for _, r := range []struct {
		account string
		o       Outcome
	}{
		{"acme", ok}, {"acme", Outcome{Status: 200, Hit: true}}, {"acme", Outcome{Status: 404}},
		{"acme", Outcome{Status: 429, Throttled: true}}, {"acme", Outcome{Status: 502}},
		{"beta", ok}, {"gamma", ok}, {"delta", Outcome{Status: 503}}, {"gamma", Outcome{Status: 200, Hit: true}},
	} {
		tr.Count(0, r.account, t0, r.o)
	}
	got := values(t, tr)
	for name, want := range map[string]float64{
		requests("acme"): 5,
		FamilyErrors + `{account="acme",class="4xx"}`:  2, // the 404 and the throttled 429
		FamilyErrors + `{account="acme",class="5xx"}`:  1,
		FamilyThrottled + `{account="acme"}`:           1,
		FamilyHits + `{account="acme"}`:                1,
		requests("beta"):                               1,
		requests("other"):                              3, // gamma twice, delta
		FamilyErrors + `{account="other",class="5xx"}`: 1,
		FamilyHits + `{account="other"}`:               1,
		FamilyThrottled + `{account="other"}`:          0,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if a := labelled(t, tr); !slices.Equal(a, []string{"acme", "beta", "other"}) {
		t.Errorf("accounts with series: %v, want acme, beta, other", a)
	}
}

// An account that becomes busier than the weakest of the top takes its place once an Interval has passed; the
// weakest's series go, its later requests count as "other", and "other" never goes down.
func TestBusyAccountTakesAPlace(t *testing.T) {
	tr := New(2)
	now := t0
	send := func(account string, n int) {
		for range n {
			tr.Count(0, account, now, Outcome{Status: 200})
		}
	}
	send("acme", 50)
	send("beta", 5)
	send("gamma", 40) // the top is full: "other", but the summary counts it
	if a := labelled(t, tr); !slices.Equal(a, []string{"acme", "beta", "other"}) {
		t.Fatalf("before the interval: %v", a)
	}
	otherBefore := values(t, tr)[requests("other")]
	now = now.Add(Interval)
	send("gamma", 1) // the first request after the interval reconsiders the top
	if a := labelled(t, tr); !slices.Equal(a, []string{"acme", "gamma", "other"}) {
		t.Fatalf("after the interval: %v, want acme, gamma, other", a)
	}
	send("beta", 3)
	send("gamma", 2)
	v := values(t, tr)
	if v[requests("other")] < otherBefore+3 {
		t.Errorf("other went from %v to %v, want at least the 3 requests of the demoted beta more", otherBefore, v[requests("other")])
	}
	if v[requests("gamma")] != 2 {
		t.Errorf("gamma's own series counts %v, want 2 (its requests since its promotion)", v[requests("gamma")])
	}
	// A light account does not unseat the top: the hysteresis keeps places from flapping.
	now = now.Add(Interval)
	send("acme", 50)
	send("gamma", 40)
	send("beta", 10)
	now = now.Add(Interval)
	send("acme", 1)
	if a := labelled(t, tr); !slices.Equal(a, []string{"acme", "gamma", "other"}) {
		t.Errorf("a lighter account took a place: %v", a)
	}
}

// However many accounts send requests, at most K of them (and "other") have series, and the busiest keep
// theirs: a long tail of accounts cannot push them out or grow the exposition.
func TestLongTailIsBounded(t *testing.T) {
	const k = 3
	tr := New(k)
	now := t0
	for round := range 20 {
		for i := range 2000 {
			tr.Count(0, fmt.Sprintf("tail-%d-%d", round, i), now, Outcome{Status: 200})
			if i%10 == 0 {
				tr.Count(0, "big-1", now, Outcome{Status: 200})
				tr.Count(0, "big-2", now, Outcome{Status: 200})
			}
		}
		if a := labelled(t, tr); len(a) > k+1 {
			t.Fatalf("round %d: %d accounts with series: %v", round, len(a), a)
		}
		now = now.Add(Interval)
	}
	a := labelled(t, tr)
	if !slices.Contains(a, "big-1") || !slices.Contains(a, "big-2") {
		t.Errorf("the busiest accounts lost their series to the tail: %v", a)
	}
}

// An account whose api_key is "other" never gets series of its own: account="other" means the rest.
func TestAccountNamedOther(t *testing.T) {
	tr := New(5)
	tr.Count(0, "other", t0, Outcome{Status: 200})
	tr.Count(0, "acme", t0, Outcome{Status: 200})
	if a := tr.Accounts(); !slices.Equal(a, []string{"acme"}) {
		t.Errorf("accounts of the top: %v, want acme only", a)
	}
	if v := values(t, tr)[requests("other")]; v != 1 {
		t.Errorf("other = %v, want 1", v)
	}
}

// Counting allocates nothing once the summary is warm, for an account of the top and for any other.
func TestCountAllocatesNothing(t *testing.T) {
	tr := New(2)
	tr.Count(0, "acme", t0, Outcome{Status: 200})
	tr.Count(0, "beta", t0, Outcome{Status: 200})
	for i := range 200 {
		tr.Count(0, "tail-"+strconv.Itoa(i), t0, Outcome{Status: 200}) // fills the summary
	}
	tail := make([]string, 500)
	for i := range tail {
		tail[i] = "late-" + strconv.Itoa(i)
	}
	for name, account := range map[string]func(int) string{
		"top":              func(int) string { return "acme" },
		"other, tracked":   func(int) string { return "tail-199" },
		"other, newcomers": func(i int) string { return tail[i%len(tail)] },
	} {
		i := 0
		if n := testing.AllocsPerRun(1000, func() {
			tr.Count(0, account(i), t0, Outcome{Status: 404, Hit: true})
			i++
		}); n != 0 {
			t.Errorf("%s: %v allocations per request", name, n)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	tr := New(20)
	for i := range 20 {
		tr.Count(0, "acct-"+strconv.Itoa(i), t0, Outcome{Status: 200})
	}
	b.Run("top", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tr.Count(0, "acct-7", t0, Outcome{Status: 200, Hit: true})
		}
	})
	b.Run("other", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tr.Count(0, "somebody", t0, Outcome{Status: 200, Hit: true})
		}
	})
}
