package api_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/reqgate/reqgate/core/api"
)

// Every refusal of credentials costs what a wrong password of an active user costs, so that response times
// tell no api_key, username or user state apart. The test compares medians through the real handler, as
// ratios to the wrong-password refusal: an absolute bound would depend on the machine.
func TestRefusalTimesMatch(t *testing.T) {
	e := start(t, api.Options{})
	cost := timingCost(e)
	t.Logf("bcrypt cost %d", cost)
	hash := func(pw string) []byte {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	p := testProvision(t)
	users := p.Accounts[0].Users
	users[0].PasswordHash = hash("alice-secret")
	users[1].PasswordHash, users[1].Status = hash("bob-secret"), "Inactive"
	users[2].PasswordHash, users[2].Deleted = hash("carol-secret"), true
	dave := user(t, 8, "dave", "dave@acme.test", "Dave", "Dunn", "alice-secret")
	dave.PasswordHash = nil
	p.Accounts[0].Users = append(users, dave)
	if err := e.Store.Apply(t.Context(), p); err != nil {
		t.Fatalf("apply: %v", err)
	}
	e.API.FlushCaches()

	// The wrong password comes first in every round, so the server has met a real hash before it needs
	// a dummy one.
	paths := []struct {
		name string
		r    req
	}{
		{"active user, wrong password", req{Path: "/api/acme/user", User: "alice", Pass: "wrong"}},
		{"unknown user", req{Path: "/api/acme/user", User: "mallory", Pass: "wrong"}},
		{"unknown account", req{Path: "/api/nosuchaccount/user", User: "alice", Pass: "alice-secret"}},
		{"inactive user", req{Path: "/api/acme/user", User: "bob", Pass: "bob-secret"}},
		{"deleted user", req{Path: "/api/acme/user", User: "carol", Pass: "carol-secret"}},
		{"user without a password", req{Path: "/api/acme/user", User: "dave", Pass: "alice-secret"}},
	}
	// Rounds interleave the paths so that a change of machine load touches them all alike; the first
	// round warms up (connections, statements, the dummy hash) and is not counted.
	const rounds = 8
	times := make([][]time.Duration, len(paths))
	for round := 0; round <= rounds; round++ {
		for i, p := range paths {
			d := timed(e, p.r, http.StatusUnauthorized)
			if round > 0 {
				times[i] = append(times[i], d)
			}
		}
	}
	ref := median(times[0])
	for i, p := range paths[1:] {
		m := median(times[i+1])
		ratio := float64(m) / float64(ref)
		t.Logf("%s: %.2fx the wrong password", p.name, ratio)
		// Equal work gives 1x; a refusal that skips bcrypt, or compares at the minimum cost, gives 0.3x or less,
		// and a dummy hash far above the real cost gives many times: the bounds leave room for a loaded machine.
		if ratio < 0.4 || ratio > 2.5 {
			t.Errorf("%s: refused in %.2fx the time of a wrong password, want 0.4x to 2.5x", p.name, ratio)
		}
	}
}

// timingCost is the lowest bcrypt cost whose comparison takes ten times a refusal that does no bcrypt
// work at all: bcrypt then dominates every refusal that does, whatever the speed of the machine or the race
// detector, and the test stays short. It is at least two above bcrypt.MinCost, so that a dummy hash of the
// minimum cost shows as a quarter of the time at most, and at most the default.
func timingCost(e *env) int {
	e.t.Helper()
	var fast []time.Duration
	for range 5 {
		fast = append(fast, timed(e, req{Path: "/api/acme/user", NoAuth: true}, http.StatusUnauthorized))
	}
	floor := 10 * median(fast)
	for cost := bcrypt.MinCost + 2; cost < bcrypt.DefaultCost; cost++ {
		h, err := bcrypt.GenerateFromPassword([]byte("x"), cost)
		if err != nil {
			e.t.Fatal(err)
		}
		start := time.Now()
		bcrypt.CompareHashAndPassword(h, []byte("y")) //nolint:errcheck // timed only
		if time.Since(start) >= floor {
			return cost
		}
	}
	return bcrypt.DefaultCost
}

// timed does r, checks its status and returns how long it took.
func timed(e *env, r req, status int) time.Duration {
	e.t.Helper()
	start := time.Now()
	e.must(r, status)
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
