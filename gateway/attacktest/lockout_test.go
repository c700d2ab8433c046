package attacktest

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestNoLockoutFromManyAddresses plays the attacker who locks a user out with wrong passwords spread over many
// addresses, each under every per-address limit: 100 guesses at alice from 10 addresses (10 each), at the
// default limits (10 per username and address, 100 per username from all addresses). Alice, from the network
// she logged in from before, must still log in at once, after her remembered credential was forgotten. A
// stranger's attempt at alice is slowed instead (the core still answers it), and attempts beyond the few that
// may wait at once are refused with ratelimit.reject_status and Retry-After. In process, and with Redis across
// two replicas (alice logged in through the first, the guesses and her next login go through the second), with
// reject_status 503 there.
func TestNoLockoutFromManyAddresses(t *testing.T) { inModes(t, testNoLockoutFromManyAddresses) }

func testNoLockoutFromManyAddresses(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	rs := redistest.Start(t)
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("redis=%v", shared), func(t *testing.T) {
			opt := m.cached(c)
			opt.MaxLoginDelay = time.Second // keeps the test short; the default is 8s
			reject := http.StatusTooManyRequests
			// Networks (/24) of their own per run, so that Redis's memory of the first run is no help.
			block := 10
			var rdb *redis.Client
			if shared {
				reject, block = http.StatusServiceUnavailable, 20
				opt.RejectStatus = reject
				rdb = redis.NewClient(&redis.Options{Addr: rs.Addr})
				t.Cleanup(func() { rdb.Close() })
				opt.Redis = rdb
			}
			first, firstURL := serve(t, opt)
			second, url := first, firstURL
			if shared {
				second, url = serve(t, opt)
			}
			target := url + "/api2/acme/re/1"
			home := from(fmt.Sprintf("127.%d.0.1", block)) // alice's own address

			if r := call(t, home, "GET", firstURL+"/api2/acme/re/1", "alice", "alice-secret", ""); r.Status != http.StatusOK {
				t.Fatalf("alice's first login: %d", r.Status)
			}
			// Her remembered credential goes (as when auth.ttl runs out): her next login is checked again.
			first.Purge("acme")
			second.Purge("acme")

			for a := range 10 {
				cl := from(fmt.Sprintf("127.%d.%d.1", block, a+1))
				for i := range 10 {
					if r := call(t, cl, "GET", target, "alice", fmt.Sprintf("guess-%d-%d", a, i), ""); r.Status != http.StatusUnauthorized {
						t.Fatalf("guess %d from address %d: %d, want 401", i, a, r.Status)
					}
				}
				if a == 0 { // past the limit of one address at one user: refused, with the configured status
					r := call(t, cl, "GET", target, "alice", "one-more", "")
					if r.Status != reject || r.Header.Get("Retry-After") == "" {
						t.Fatalf("an 11th guess from one address: %d Retry-After %q, want %d with Retry-After", r.Status,
							r.Header.Get("Retry-After"), reject)
					}
				}
			}

			delayed := second.Stats().DelayedLogins
			start := time.Now()
			if r := call(t, home, "GET", target, "alice", "alice-secret", ""); r.Status != http.StatusOK {
				t.Fatalf("alice from her own address after 100 guesses from 10 others: %d, want 200 (locked out)", r.Status)
			}
			t.Logf("alice's login after the guesses took %v", time.Since(start))
			if n := second.Stats().DelayedLogins - delayed; n != 0 {
				t.Errorf("alice's login from her own network waited (%d), want it at once", n)
			}
			// Another address of her network (the /24) is hers too.
			second.Purge("acme")
			if r := call(t, from(fmt.Sprintf("127.%d.0.77", block)), "GET", target, "alice", "alice-secret", ""); r.Status != http.StatusOK {
				t.Errorf("alice from another address of her network: %d, want 200", r.Status)
			}

			// A stranger is slowed, not refused: the core still answers the attempt, after a wait.
			stranger := from(fmt.Sprintf("127.%d.50.1", block))
			delayed = second.Stats().DelayedLogins
			start = time.Now()
			if r := call(t, stranger, "GET", target, "alice", "stranger-guess", ""); r.Status != http.StatusUnauthorized {
				t.Fatalf("a stranger's guess past the limit of all addresses: %d, want 401 after a wait", r.Status)
			}
			t.Logf("a stranger's guess took %v", time.Since(start))
			if second.Stats().DelayedLogins == delayed {
				t.Errorf("the stranger's guess past the limit of all addresses did not wait")
			}

			// Many strangers at once: a few wait, the others are refused at once with Retry-After; none waits forever.
			const strangers = 16
			statuses, retry := make([]int, strangers), make([]string, strangers)
			var wg sync.WaitGroup
			for i := range strangers {
				wg.Go(func() {
					r, err := send(from(fmt.Sprintf("127.%d.%d.1", block, 100+i)), "GET", target, "alice",
						fmt.Sprintf("stranger-%d", i), "")
					if err != nil {
						t.Errorf("stranger %d: %v", i, err)
						return
					}
					statuses[i], retry[i] = r.Status, r.Header.Get("Retry-After")
				})
			}
			wg.Wait()
			count := map[int]int{}
			for i, s := range statuses {
				count[s]++
				if s == reject && retry[i] == "" {
					t.Errorf("stranger %d refused without Retry-After", i)
				}
			}
			t.Logf("%d strangers at once: answers %v", strangers, count)
			if count[http.StatusUnauthorized]+count[reject] != strangers || count[reject] == 0 {
				t.Errorf("answers to %d strangers at once %v: want some 401 after a wait, the rest %d", strangers, count, reject)
			}

			// Alice is still in from her own network.
			second.Purge("acme")
			if r := call(t, home, "GET", target, "alice", "alice-secret", ""); r.Status != http.StatusOK {
				t.Errorf("alice from her own address after the strangers: %d, want 200", r.Status)
			}
		})
	}
}
