package gateway

import (
	"encoding/base64"
	"testing"
	"time"
)

// FuzzCredentialParse feeds arbitrary Authorization headers to the credential check: it never panics, a
// well-formed header always parses to its user, two different passwords never share a digest, and a
// remembered credential is verified for its own api_key only, under its own user name.
func FuzzCredentialParse(f *testing.F) {
	for _, s := range []string{"Basic ZGVtbzpkZW1v", "basic ", "Basic !!!", "Bearer x", "Basic " + base64.StdEncoding.EncodeToString(make([]byte, 600))} {
		f.Add(s, "demo", "pw")
	}
	c := newCredentials(time.Minute, time.Now)
	f.Fuzz(func(t *testing.T, header, user, pass string) {
		now := time.Now()
		_, _ = c.check([]byte(header), "demo", now)
		if len(user) > 100 || len(pass) > 100 {
			return
		}
		for i := 0; i < len(user); i++ {
			if user[i] == ':' {
				return
			}
		}
		h := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		cr, _ := c.check([]byte(h), "demo", now)
		if !cr.present || cr.user != user {
			t.Fatalf("check(%q) = %+v, want user %q", h, cr, user)
		}
		other, _ := c.check([]byte("Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass+"x"))), "demo", now)
		if other.digest == cr.digest {
			t.Fatalf("different passwords share a digest")
		}
		c.remember(cr)
		if again, ok := c.check([]byte(h), "demo", now); !ok || again.user != user || again.digest != cr.digest {
			t.Fatalf("remembered credential: check = %+v, %v", again, ok)
		}
		if _, ok := c.check([]byte(h), "demo2", now); ok {
			t.Fatalf("a credential remembered for one api_key is verified for another")
		}
	})
}
