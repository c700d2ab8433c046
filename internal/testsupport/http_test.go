package testsupport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestSendHeaders checks what a server receives from Send: the credentials, the body as XML unless a header
// says otherwise, a header given twice sent twice, and a header with an empty value not sent at all.
func TestSendHeaders(t *testing.T) {
	type seen struct {
		user, pass  string
		contentType []string
		accept      []string
		userAgent   []string
		body        string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		b, _ := io.ReadAll(r.Body)
		got <- seen{u, p, r.Header.Values("Content-Type"), r.Header.Values("Accept"), r.Header.Values("User-Agent"), string(b)}
		w.Header().Set("X-Answer", "yes")
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "short and stout")
	}))
	defer srv.Close()

	for _, tc := range []struct {
		name    string
		user    string // "" sends no credentials
		body    string
		headers []string
		want    seen
	}{
		{name: "credentials and xml body", user: "alice", body: "<a/>",
			want: seen{user: "alice", pass: "alice-pw", contentType: []string{"application/xml"}, userAgent: []string{"Go-http-client/1.1"}, body: "<a/>"}},
		{name: "content type replaced", user: "alice", body: "{}", headers: []string{"Content-Type: application/json"},
			want: seen{user: "alice", pass: "alice-pw", contentType: []string{"application/json"}, userAgent: []string{"Go-http-client/1.1"}, body: "{}"}},
		{name: "a header twice", headers: []string{"Accept: a/b", "accept: c/d"},
			want: seen{accept: []string{"a/b", "c/d"}, userAgent: []string{"Go-http-client/1.1"}}},
		{name: "an empty value sends none", user: "alice", body: "<a/>", headers: []string{"Content-Type:"},
			want: seen{user: "alice", pass: "alice-pw", userAgent: []string{"Go-http-client/1.1"}, body: "<a/>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Do(t, srv.Client(), http.MethodPost, srv.URL, tc.user, tc.user+"-pw", tc.body, tc.headers...)
			if r.Status != http.StatusTeapot || r.Header.Get("X-Answer") != "yes" || r.Body != "short and stout" {
				t.Errorf("reply %d %q %q, want 418 with the server's header and body", r.Status, r.Header.Get("X-Answer"), r.Body)
			}
			s := <-got
			if s.user != tc.want.user || s.pass != tc.want.pass || s.body != tc.want.body ||
				!slices.Equal(s.contentType, tc.want.contentType) || !slices.Equal(s.accept, tc.want.accept) ||
				!slices.Equal(s.userAgent, tc.want.userAgent) {
				t.Errorf("server saw %+v, want %+v", s, tc.want)
			}
		})
	}
}
