package gateway

import (
	"encoding/base64"
	"testing"
	"time"
)

// FuzzCredentialParse feeds arbitrary Authorization headers to the credential parser: it never panics, a
// well-formed header always parses to its user, and two different passwords never share a digest.
func FuzzCredentialParse(f *testing.F) {
	for _, s := range []string{"Basic ZGVtbzpkZW1v", "basic ", "Basic !!!", "Bearer x", "Basic " + base64.StdEncoding.EncodeToString(make([]byte, 600))} {
		f.Add(s, "demo", "pw")
	}
	c := newCredentials(time.Minute, time.Now)
	f.Fuzz(func(t *testing.T, header, user, pass string) {
		_ = c.parse([]byte(header), "demo")
		if len(user) > 100 || len(pass) > 100 {
			return
		}
		for i := 0; i < len(user); i++ {
			if user[i] == ':' {
				return
			}
		}
		h := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		cr := c.parse([]byte(h), "demo")
		if !cr.present || cr.user != user {
			t.Fatalf("parse(%q) = %+v, want user %q", h, cr, user)
		}
		other := c.parse([]byte("Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass+"x"))), "demo")
		if other.digest == cr.digest {
			t.Fatalf("different passwords share a digest")
		}
	})
}
