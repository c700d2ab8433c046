package ratelimit

import (
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config/configtest"
)

func TestNewValidates(t *testing.T) {
	ok := Policy{Name: "account", Key: KeyAPIKey, Limit: 25, Burst: 25, Period: 10 * time.Second}
	tests := []struct {
		name    string
		opt     Options
		wantErr string // "" = valid
	}{
		{"no policies", Options{}, ""},
		{"contract example", Options{Policies: []Policy{ok},
			Overrides: []Override{{APIKey: "acme-7f3a", Policy: "account", Limit: 1000, Burst: 1000, Period: time.Second}}}, ""},
		{"503", Options{Policies: []Policy{ok}, RejectStatus: 503}, ""},
		{"reject status 500", Options{RejectStatus: 500}, "reject_status 500"},
		{"on_redis_error", Options{OnRedisError: "panic"}, `on_redis_error "panic"`},
		{"empty name", Options{Policies: []Policy{{Key: KeyIP, Limit: 1, Burst: 1, Period: time.Second}}}, "policy name"},
		{"bad name", Options{Policies: []Policy{{Name: `a"b`, Key: KeyIP, Limit: 1, Burst: 1, Period: time.Second}}}, "only letters"},
		{"bad key", Options{Policies: []Policy{{Name: "p", Key: "host", Limit: 1, Burst: 1, Period: time.Second}}}, `key "host"`},
		{"zero limit", Options{Policies: []Policy{{Name: "p", Key: KeyIP, Period: time.Second}}}, "limit 0"},
		{"zero period", Options{Policies: []Policy{{Name: "p", Key: KeyIP, Limit: 1, Burst: 1}}}, "period 0s"},
		{"zero burst", Options{Policies: []Policy{{Name: "p", Key: KeyIP, Limit: 1, Period: time.Second}}}, "burst 0"},
		{"negative burst", Options{Policies: []Policy{{Name: "p", Key: KeyIP, Limit: 1, Period: time.Second, Burst: -1}}}, "burst -1"},
		{"negative max_delay", Options{Policies: []Policy{{Name: "p", Key: KeyIP, Limit: 1, Burst: 1, Period: time.Second, MaxDelay: -1}}}, "max_delay"},
		{"too fast", Options{Policies: []Policy{{Name: "p", Key: KeyIP, Limit: 2_000_000, Burst: 2_000_000, Period: time.Second}}}, "at most"},
		{"duplicate policy", Options{Policies: []Policy{ok, ok}}, "defined twice"},
		{"override of unknown policy", Options{Policies: []Policy{ok},
			Overrides: []Override{{APIKey: "k", Policy: "daily", Limit: 1, Burst: 1, Period: time.Second}}}, `unknown policy "daily"`},
		{"override without api_key", Options{Policies: []Policy{ok},
			Overrides: []Override{{Policy: "account", Limit: 1, Burst: 1, Period: time.Second}}}, "api_key is empty"},
		{"override with zero period", Options{Policies: []Policy{ok},
			Overrides: []Override{{APIKey: "k", Policy: "account", Limit: 1, Burst: 1}}}, "period 0s"},
		{"override with zero burst", Options{Policies: []Policy{ok},
			Overrides: []Override{{APIKey: "k", Policy: "account", Limit: 1, Period: time.Second}}}, "burst 0"},
		{"duplicate override", Options{Policies: []Policy{ok}, Overrides: []Override{
			{APIKey: "k", Policy: "account", Limit: 1, Burst: 1, Period: time.Second},
			{APIKey: "k", Policy: "account", Limit: 2, Burst: 2, Period: time.Second}}}, "defined twice"},
		{"negative max held", Options{MaxHeld: -1}, "max held"},
		{"negative replicas", Options{LocalReplicas: -2}, "local replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Logger = quiet
			l, err := New(withConfig(tt.opt))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("New succeeded, want error %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("New: %v, want %q in it", err, tt.wantErr)
			}
			if err == nil && l.RejectStatus() != max(429, tt.opt.RejectStatus) {
				t.Errorf("RejectStatus %d", l.RejectStatus())
			}
		})
	}
}

func TestPolicyItem(t *testing.T) {
	tests := []struct {
		limit  int
		period time.Duration
		want   string
	}{
		{25, 10 * time.Second, `"p";q=25;w=10`},
		{1000, time.Second, `"p";q=1000;w=1`},
		{10, time.Hour, `"p";q=10;w=3600`},
		{5, 100 * time.Millisecond, `"p";q=50;w=1`},
		{3, 1500 * time.Millisecond, `"p";q=4;w=2`},
	}
	for _, tt := range tests {
		if got := policyItem("p", tt.limit, tt.period); got != tt.want {
			t.Errorf("policyItem(%d, %s) = %s, want %s", tt.limit, tt.period, got, tt.want)
		}
	}
}

func TestRuleKey(t *testing.T) {
	long := strings.Repeat("x", 500)
	tests := []struct {
		kind string
		ns   string // the Redis namespace
		r    Request
		want string
	}{
		{KeyAPIKey, "", Request{APIKey: "k", User: "u", IP: "1.2.3.4"}, "reqgate:rl:p:k:k"},
		{KeyAPIKey, "", Request{User: "u"}, ""},
		{KeyUser, "", Request{APIKey: "a:b", User: "c"}, "reqgate:rl:p:u:3:a:b:c"},
		{KeyUser, "", Request{APIKey: "a", User: "b:c"}, "reqgate:rl:p:u:1:a:b:c"},
		{KeyUser, "", Request{APIKey: "a"}, ""},
		{KeyIP, "", Request{IP: "::1"}, "reqgate:rl:p:i:::1"},
		{KeyIP, "", Request{APIKey: "k"}, ""},
		{KeyAPIKey, "", Request{APIKey: long}, "reqgate:rl:p:k:" + keyPart(long)},
		{KeyAPIKey, "alpha", Request{APIKey: "k"}, "alpha:reqgate:rl:p:k:k"},
		{KeyUser, "team-b.prod", Request{APIKey: "a", User: "b"}, "team-b.prod:reqgate:rl:p:u:1:a:b"},
		{KeyIP, "alpha", Request{APIKey: "k"}, ""},
	}
	for _, tt := range tests {
		r, err := newRule(Policy{Name: "p", Key: tt.kind, Limit: 1, Burst: 1, Period: time.Second}, tt.ns)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.key(tt.r); got != tt.want {
			t.Errorf("%s key of %+v in namespace %q = %q, want %q", tt.kind, tt.r, tt.ns, got, tt.want)
		}
	}
	if got := len(keyPart(long)); got != len("sha256-")+64 {
		t.Errorf("long key part has %d bytes, want a SHA-256", got)
	}
}

func TestFallbackShare(t *testing.T) {
	tests := []struct {
		replicas, burst int
		wantInterval    time.Duration
		wantBurst       int64
	}{
		{1, 10, 100 * time.Millisecond, 10},
		{3, 10, 300 * time.Millisecond, 4},
		{20, 10, 2 * time.Second, 1},
	}
	for _, tt := range tests {
		r, err := newRule(Policy{Name: "p", Key: KeyIP, Limit: 10, Period: time.Second, Burst: tt.burst}, "")
		if err != nil {
			t.Fatal(err)
		}
		p := r.share(int64(tt.replicas))
		if got, want := time.Duration(p.interval), tt.wantInterval; got != want {
			t.Errorf("%d replicas: interval %s, want %s", tt.replicas, got, want)
		}
		if got, want := p.tolerance/p.interval, tt.wantBurst; got != want {
			t.Errorf("%d replicas: burst %d, want %d", tt.replicas, got, want)
		}
	}
}

// FuzzAdmitLocal feeds arbitrary request fields to the in-process limiter: no panic, bounded keys.
func FuzzAdmitLocal(f *testing.F) {
	f.Add("acme", "alice", "192.0.2.1")
	f.Add("", "", "")
	f.Add(strings.Repeat("k", 300), "a:b", "::1")
	l, err := New(withConfig(Options{Logger: quiet, Policies: []Policy{
		{Name: "k", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Hour},
		{Name: "u", Key: KeyUser, Limit: 1, Burst: 1, Period: time.Hour, MaxDelay: time.Nanosecond},
		{Name: "i", Key: KeyIP, Limit: 1, Burst: 1, Period: time.Hour},
	}}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, apiKey, user, ip string) {
		r := Request{APIKey: apiKey, User: user, IP: ip}
		d := l.Admit(t.Context(), r)
		if d.Limited != (apiKey != "" || user != "" || ip != "") {
			t.Fatalf("Limited=%v for %+v", d.Limited, r)
		}
		for _, ru := range l.rules {
			if k := ru.key(r); len(k) > 400 {
				t.Fatalf("key of %d bytes", len(k))
			}
		}
		_ = l.Status(t.Context(), r)
	})
}

// TestNewRefusesUnset checks that New refuses the values a configuration always gives instead of putting a
// default in their place, and takes MaxHeld 0 as "hold none".
func TestNewRefusesUnset(t *testing.T) {
	configtest.CheckNew(t, configured, func(o Options) error {
		o.Logger = quiet
		_, err := New(o)
		return err
	}, []configtest.Edit[Options]{
		configtest.Accepted("configured", func(*Options) {}),
		configtest.Accepted("hold none", func(o *Options) { o.MaxHeld = 0 }),
		configtest.Refused("no reject status", func(o *Options) { o.RejectStatus = 0 }, "reject_status 0"),
		configtest.Refused("no on_redis_error", func(o *Options) { o.OnRedisError = "" }, `on_redis_error ""`),
		configtest.Refused("no redis timeout", func(o *Options) { o.RedisTimeout = 0 }, "must be positive"),
		configtest.Refused("no redis backoff", func(o *Options) { o.RedisBackoff = 0 }, "must be positive"),
		configtest.Refused("no replicas", func(o *Options) { o.LocalReplicas = 0 }, "local replicas 0"),
	})
}
