package gateway

import (
	"encoding/base64"
	"testing"
	"time"
)

// TestCredentialMemoFollowsProofs: a connection's memo of a proved credential answers as the store of proofs
// would: a forgotten credential (a 401 from the core, a purge of its account) or an expired proof is not
// verified on the connection's next request, a renewed one is, and a proof past half its TTL asks for a refresh.
func TestCredentialMemoFollowsProofs(t *testing.T) {
	const ttl = time.Minute
	now := time.Unix(1_700_000_000, 0)
	c := newCredentials(ttl, func() time.Time { return now })
	server, _ := tcpPair(t)
	nc := &conn{Conn: server}
	auth := []byte("Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-secret")))
	check := func(step string, wantVerified, wantRefresh bool) {
		t.Helper()
		for i := range 2 { // the second is answered from the memo the first left
			cr, verified := c.checkOn(nc, auth, "acme", now)
			if verified != wantVerified || cr.refresh != wantRefresh || cr.user != "alice" {
				t.Fatalf("%s (request %d): verified=%v refresh=%v user=%q, want verified=%v refresh=%v user alice",
					step, i+1, verified, cr.refresh, cr.user, wantVerified, wantRefresh)
			}
		}
	}
	check("never proved", false, false)
	cr, _ := c.check(auth, "acme", now)
	c.remember(cr)
	check("proved", true, false)
	c.forget(cr)
	check("forgotten after a 401", false, false)
	c.remember(cr)
	check("proved again", true, false)
	c.forgetAccount("acme")
	check("account purged", false, false)
	c.remember(cr)
	check("proved once more", true, false)
	now = now.Add(ttl / 2)
	check("half the TTL later", true, true)
	c.renew(cr)
	check("renewed", true, false)
	now = now.Add(ttl)
	check("expired", false, false)
}

// BenchmarkCredentialMemo is a hit's credential check on a connection whose memo holds the credential, from
// as many goroutines as Ps, each on a connection of its own (as the server's connections are).
func BenchmarkCredentialMemo(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	c := newCredentials(time.Hour, func() time.Time { return now })
	auth := []byte("Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-secret")))
	cr, _ := c.check(auth, "acme", now)
	c.remember(cr)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		server, _ := tcpPair(b)
		nc := &conn{Conn: server}
		for pb.Next() {
			if _, ok := c.checkOn(nc, auth, "acme", now); !ok {
				b.Error("not verified")
				return
			}
		}
	})
}
