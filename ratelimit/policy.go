package ratelimit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reqgate/reqgate/internal/redisns"
)

// Policy is one configured limit (contract: ratelimit.policies). Every policy that matches a request must admit it.
type Policy struct {
	Name     string        // shown in the RateLimit headers; letters, digits, '_', '-', '.'
	Key      string        // what is counted: api_key, user (api_key + username) or ip
	Limit    int           // requests ...
	Period   time.Duration // ... per period
	Burst    int           // how many may arrive at once; at least 1 (the configuration's default is Limit); GCRA only
	MaxDelay time.Duration // shaping: hold a request up to this long for its slot instead of rejecting; 0 = never; GCRA only

	// Algorithm is how the policy counts: AlgorithmGCRA (also when empty) or AlgorithmWindow.
	Algorithm string
	// Block (AlgorithmWindow only): once a request is refused for exceeding the window, every request of the key
	// is refused for Block, and each request refused meanwhile starts the Block again; 0 = no block.
	Block time.Duration
}

// Algorithms of a Policy (window.go describes the window).
const (
	AlgorithmGCRA   = "gcra"
	AlgorithmWindow = "window"
)

// MaxWindowLimit bounds a window policy's limit: a key keeps the time of each request it admitted within the
// last period, in process and in Redis.
const MaxWindowLimit = 10_000

// Override replaces the numbers of one policy for one api_key (contract: ratelimit.overrides). MaxDelay and Key
// stay the policy's.
type Override struct {
	APIKey string
	Policy string // a Policy.Name
	Limit  int
	Period time.Duration
	Burst  int // at least 1, as Policy.Burst
}

// Key kinds of a Policy.
const (
	KeyAPIKey = "api_key"
	KeyUser   = "user"
	KeyIP     = "ip"
)

// maxRate bounds limit/period so the emission interval is at least one microsecond, the unit of the Redis script.
const maxRate = 1_000_000 // per second

// maxKeyPart bounds the client-supplied parts of a Redis key; longer values are hashed.
const maxKeyPart = 128

// rule is a validated policy (or an override of it) with everything precomputed for the request path.
type rule struct {
	name     string
	kind     string
	limit    int
	period   time.Duration
	burst    int
	maxDelay time.Duration
	prefix   string // Redis key prefix: [<namespace>:]reqgate:rl:<name>: (GCRA), [<namespace>:]reqgate:rlw:<name>: (window)

	// A window rule (window.go) counts the requests of the last period instead of GCRA's TAT.
	window bool
	block  time.Duration

	local   params       // nanoseconds, in-process limiter at the full rate
	win     windowParams // window rules: nanoseconds, in-process limiter at the full limit
	redis   [4]any       // this rule's ARGV of the script (redis.go), boxed once
	credits int          // the most credits one grant may give (credits.go)
	header  string       // this policy's RateLimit-Policy item
	quoted  string       // the start of its RateLimit item: the quoted name and ";r="
}

// newRule validates p and precomputes its rule, whose Redis keys are in the namespace ns.
func newRule(p Policy, ns string) (*rule, error) {
	if err := validName(p.Name); err != nil {
		return nil, err
	}
	switch p.Key {
	case KeyAPIKey, KeyUser, KeyIP:
	default:
		return nil, fmt.Errorf("policy %q: key %q: want api_key, user or ip", p.Name, p.Key)
	}
	if err := validNumbers(p.Limit, p.Period, p.Burst); err != nil {
		return nil, fmt.Errorf("policy %q: %w", p.Name, err)
	}
	if p.MaxDelay < 0 {
		return nil, fmt.Errorf("policy %q: max_delay %s: must not be negative", p.Name, p.MaxDelay)
	}
	switch p.Algorithm {
	case "", AlgorithmGCRA:
		if p.Block != 0 {
			return nil, fmt.Errorf("policy %q: block applies to algorithm window only", p.Name)
		}
	case AlgorithmWindow:
		return newWindowRule(p, ns)
	default:
		return nil, fmt.Errorf("policy %q: algorithm %q: want gcra or window", p.Name, p.Algorithm)
	}
	r := &rule{name: p.Name, kind: p.Key, limit: p.Limit, period: p.Period, burst: p.Burst, maxDelay: p.MaxDelay,
		prefix: redisns.Name(ns, "reqgate:rl:"+p.Name+":")}
	interval := p.Period / time.Duration(p.Limit)
	r.local = params{interval: int64(interval), tolerance: int64(interval) * int64(p.Burst), maxDelay: int64(p.MaxDelay)}
	us := interval.Round(time.Microsecond).Microseconds()
	r.redis = [4]any{"g", us, us * int64(p.Burst), p.MaxDelay.Microseconds()}
	r.header = policyItem(p.Name, p.Limit, p.Period)
	r.quoted = strconv.Quote(p.Name) + ";r="
	r.credits = ruleCredits(interval)
	return r, nil
}

// share is r's params for one of n replicas limiting on their own (the local fallback): each admits limit/n per
// period, with a burst of burst/n rounded up (at least 1), so that n replicas together admit at most the policy
// plus the rounding of the burst.
func (r *rule) share(n int64) params {
	if n <= 1 || r.window {
		return r.local
	}
	interval := time.Duration(r.local.interval) * time.Duration(n)
	burst := max(1, (int64(r.burst)+n-1)/n)
	return params{interval: int64(interval), tolerance: int64(interval) * burst, maxDelay: r.local.maxDelay}
}

// compile validates the policies and overrides and returns the rules, and per api_key with overrides the full
// rule list with that key's overrides in place; their Redis keys are in the namespace ns.
func compile(ns string, policies []Policy, overrides []Override) ([]*rule, map[string][]*rule, error) {
	var rules []*rule
	byName := make(map[string]int)
	for _, p := range policies {
		r, err := newRule(p, ns)
		if err != nil {
			return nil, nil, err
		}
		if _, dup := byName[p.Name]; dup {
			return nil, nil, fmt.Errorf("policy %q: defined twice", p.Name)
		}
		byName[p.Name] = len(rules)
		rules = append(rules, r)
	}
	byKey, err := compileOverrides(ns, rules, byName, overrides)
	if err != nil {
		return nil, nil, err
	}
	return rules, byKey, nil
}

// compileOverrides returns, per api_key with overrides, the rules with that key's overrides in place; byName
// gives the index of each policy in rules; their Redis keys are in the namespace ns.
func compileOverrides(ns string, rules []*rule, byName map[string]int, overrides []Override) (
	map[string][]*rule, error) {
	byKey := make(map[string][]*rule)
	seen := make(map[[2]string]bool)
	for _, o := range overrides {
		i, ok := byName[o.Policy]
		if !ok {
			return nil, fmt.Errorf("override for api_key %q: unknown policy %q", o.APIKey, o.Policy)
		}
		if o.APIKey == "" {
			return nil, fmt.Errorf("override of policy %q: api_key is empty", o.Policy)
		}
		if seen[[2]string{o.APIKey, o.Policy}] {
			return nil, fmt.Errorf("override for api_key %q, policy %q: defined twice", o.APIKey, o.Policy)
		}
		seen[[2]string{o.APIKey, o.Policy}] = true
		r, err := rules[i].withOverride(o, ns)
		if err != nil {
			return nil, fmt.Errorf("override for api_key %q: %w", o.APIKey, err)
		}
		rs, ok := byKey[o.APIKey]
		if !ok {
			rs = append([]*rule(nil), rules...)
		}
		rs[i] = r
		byKey[o.APIKey] = rs
	}
	return byKey, nil
}

// withOverride returns a copy of r with the numbers of o, its keys in the namespace ns (r's).
func (r *rule) withOverride(o Override, ns string) (*rule, error) {
	p := Policy{Name: r.name, Key: r.kind, Limit: o.Limit, Period: o.Period, Burst: o.Burst, MaxDelay: r.maxDelay}
	if r.window {
		p.Algorithm, p.Block, p.Burst = AlgorithmWindow, r.block, 1 // a window has no burst
	}
	return newRule(p, ns)
}

func validNumbers(limit int, period time.Duration, burst int) error {
	switch {
	case limit <= 0:
		return fmt.Errorf("limit %d: must be at least 1", limit)
	case period <= 0:
		return fmt.Errorf("period %s: must be positive", period)
	case burst < 1:
		return fmt.Errorf("burst %d: must be at least 1", burst)
	case float64(limit)/period.Seconds() > maxRate:
		return fmt.Errorf("limit %d per %s: at most %d per second", limit, period, maxRate)
	case burst > 1<<30:
		return fmt.Errorf("burst %d: too large", burst)
	}
	return nil
}

func validName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("policy name %q: must be 1 to 64 characters", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("policy name %q: only letters, digits, '_', '-' and '.'", name)
		}
	}
	return nil
}

// key returns the Redis key (also the in-process key) r counts req under, or "" when r does not apply to req.
func (r *rule) key(req Request) string {
	switch r.kind {
	case KeyAPIKey:
		if req.APIKey == "" {
			return ""
		}
		return r.prefix + "k:" + keyPart(req.APIKey)
	case KeyUser:
		if req.User == "" {
			return ""
		}
		// The length prefix keeps ("a:b","c") and ("a","b:c") apart.
		return r.prefix + "u:" + strconv.Itoa(len(req.APIKey)) + ":" + keyPart(req.APIKey) + ":" + keyPart(req.User)
	case KeyIP:
		if req.IP == "" {
			return ""
		}
		return r.prefix + "i:" + keyPart(req.IP)
	}
	return ""
}

// keyPart bounds a client-supplied key part: long values are replaced by their SHA-256.
func keyPart(s string) string {
	if len(s) <= maxKeyPart {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// policyItem is one RateLimit-Policy list item (draft-ietf-httpapi-ratelimit-headers-10): quota q per window w
// seconds. w must be a whole number of seconds, so a period that is not is reported as the quota of the nearest
// whole-second window (at least 1 s) at the same rate.
func policyItem(name string, limit int, period time.Duration) string {
	w := max(1, int64(period.Round(time.Second)/time.Second))
	q := int64(limit)
	if period != time.Duration(w)*time.Second {
		q = int64(float64(limit) * float64(w) * float64(time.Second) / float64(period))
	}
	var b strings.Builder
	b.WriteString(strconv.Quote(name))
	b.WriteString(";q=")
	b.WriteString(strconv.FormatInt(q, 10))
	b.WriteString(";w=")
	b.WriteString(strconv.FormatInt(w, 10))
	return b.String()
}
