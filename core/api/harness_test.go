package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// The test account "acme": requirements with one field of every type the record code distinguishes, a
// feature and use-case kind with a title only, a custom object "risk", and users of whom two share an
// address. A second account "other" checks that credentials do not cross accounts.
const (
	keyAcme  = "acme"
	keyOther = "other"
)

var (
	hashesOnce sync.Once
	hashes     map[string][]byte
)

// passwordHash hashes the test passwords once per test binary (MinCost: tests need no slow hashes).
func passwordHash(tb testing.TB, password string) []byte {
	hashesOnce.Do(func() {
		hashes = map[string][]byte{}
		for _, p := range []string{"alice-secret", "bob-secret", "carol-secret", "zed-secret", "new-secret"} {
			h, err := bcrypt.GenerateFromPassword([]byte(p), bcrypt.MinCost)
			if err != nil {
				panic(err)
			}
			hashes[p] = h
		}
	})
	h, ok := hashes[password]
	if !ok {
		tb.Fatalf("no test hash for %q", password)
	}
	return h
}

func user(tb testing.TB, id int64, name, email, first, last, password string) core.UserSpec {
	return core.UserSpec{User: core.User{ID: id, Username: name, Email: email, FirstName: first, LastName: last,
		Status: "Active", PasswordHash: passwordHash(tb, password)}}
}

func title(id int64, kind string) core.Field {
	return core.Field{ID: id, Kind: kind, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title",
		Required: true, Sort: 1, Help: "Short name", MaxSize: 255}
}

// testProvision is the account file of the tests, built directly (the account-file reader is tested in
// core/accounts).
func testProvision(tb testing.TB) *core.Provision {
	re := []core.Field{
		title(101, "re"),
		{ID: 102, Kind: "re", Label: "Description", Type: core.TypeTextarea, SpecialPurpose: "desc", Sort: 2, MaxSize: 30000},
		{ID: 103, Kind: "re", Label: "Status", Type: core.TypePickOne, SpecialPurpose: "status", Sort: 3,
			ListType: core.ListNormal, Options: []core.Option{
				{Value: 1, Label: "Pending Review", Sort: 1, Default: true},
				{Value: 2, Label: "Accepted - Scheduled", Sort: 2},
				{Value: 3, Label: "Accepted - Unscheduled", Sort: 3},
			}},
		{ID: 104, Kind: "re", Label: "Owner", Type: core.TypePickOne, SpecialPurpose: "owner", Sort: 4, ListType: core.ListUser},
		{ID: 105, Kind: "re", Label: "Platforms", Type: core.TypePickMultiple, Sort: 5, ListType: core.ListNormal,
			Options: []core.Option{{Value: 1, Label: "Web", Sort: 1}, {Value: 2, Label: "iOS", Sort: 2}, {Value: 3, Label: "Android", Sort: 3}}},
		{ID: 106, Kind: "re", Label: "Estimate", Type: core.TypeInteger, Sort: 6},
		{ID: 107, Kind: "re", Label: "Reviewers", Type: core.TypePickMultiple, Sort: 7, ListType: core.ListUser},
	}
	return &core.Provision{Accounts: []core.AccountSpec{
		{
			APIKey: keyAcme,
			Name:   "Acme Corp",
			Users: []core.UserSpec{
				user(tb, 5, "alice", "alice@acme.test", "Alice", "Archer", "alice-secret"),
				user(tb, 6, "bob", "bob@acme.test", "Bob", "Baker", "bob-secret"),
				user(tb, 7, "carol", "alice@acme.test", "Carol", "Cooper", "carol-secret"),
			},
			Fields: map[string][]core.Field{
				"re": re,
				"ft": {title(201, "ft")},
				"uc": {title(301, "uc")},
			},
			Objects: []core.ObjectSpec{{
				Object: core.Object{APIPrefix: "risk", NameSingular: "Risk", NamePlural: "Risks", IDPrefix: "RSK",
					Description: "Project risks", Custom: true},
				Fields: []core.Field{
					title(401, "risk"),
					{ID: 402, Kind: "risk", Label: "Severity", Type: core.TypePickOne, Sort: 2, ListType: core.ListNormal,
						Options: []core.Option{{Value: 1, Label: "Low"}, {Value: 2, Label: "High"}}},
				},
			}},
		},
		{
			APIKey: keyOther,
			Name:   "Other Inc",
			Users:  []core.UserSpec{user(tb, 1, "zed", "zed@other.test", "Zed", "Zulu", "zed-secret")},
			Fields: map[string][]core.Field{"re": {title(101, "re")}, "ft": {title(201, "ft")}, "uc": {title(301, "uc")}},
		},
	}}
}

// env is a core API on a temporary SQLite file behind a real loopback HTTP server.
type env struct {
	t     testing.TB
	URL   string
	Store *sqlite.Store // nil on another engine
	API   *api.Server
}

// start opens a new store, applies testProvision and serves the API.
func start(tb testing.TB, opt api.Options) *env {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "core.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	e := serve(tb, st, opt)
	e.Store = st
	return e
}

// serve applies testProvision to st, serves the API on it and closes st when the test ends.
func serve(tb testing.TB, st core.Store, opt api.Options) *env {
	tb.Helper()
	tb.Cleanup(func() { st.Close() })
	if err := st.Apply(context.Background(), testProvision(tb)); err != nil {
		tb.Fatalf("apply: %v", err)
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := api.New(st, configtest.Overlay(coretest.APIOptions(), opt))
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return &env{t: tb, URL: hs.URL, API: srv}
}

// engines opens a new store of each engine for a test.
var engines = []struct {
	name string
	open func(tb testing.TB) core.Store
}{
	{"sqlite", func(tb testing.TB) core.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "core.db"))
		if err != nil {
			tb.Fatal(err)
		}
		return st
	}},
	{"postgres", func(tb testing.TB) core.Store {
		st, err := postgres.Open(context.Background(), pgtest.Shared(tb).NewDatabase(tb))
		if err != nil {
			tb.Fatal(err)
		}
		return st
	}},
}

// resp is a response read whole.
type resp = testsupport.Reply

// req describes a request of a test; the zero User means alice.
type req struct {
	Method, Path, Body string
	User, Pass         string
	NoAuth             bool
	Header             map[string]string // an empty value removes the header
}

// do sends r and reads the response. It ends the test on a transport failure, so it is for the test's own
// goroutine; others use send.
func (e *env) do(r req) resp {
	e.t.Helper()
	res, err := e.send(r)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// send is do returning the transport failure, for any goroutine.
func (e *env) send(r req) (resp, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	user, pass := "", ""
	if !r.NoAuth {
		user, pass = r.User, r.Pass
		if user == "" {
			user, pass = "alice", "alice-secret"
		}
	}
	hr, err := testsupport.NewRequest(r.Method, e.URL+r.Path, user, pass, r.Body)
	if err != nil {
		return resp{}, err
	}
	for k, v := range r.Header {
		if v == "" {
			hr.Header.Del(k) // an empty value leaves the header out
			continue
		}
		hr.Header.Set(k, v)
	}
	return testsupport.Read(http.DefaultClient, hr)
}

// must does r and fails the test unless the status is want.
func (e *env) must(r req, want int) resp {
	e.t.Helper()
	got := e.do(r)
	if got.Status != want {
		e.t.Fatalf("%s %s: status %d, want %d; body:\n%s", r.Method, r.Path, got.Status, want, got.Body)
	}
	return got
}

// create POSTs a record body and returns the new id from the Location header.
func (e *env) create(version, seg, body string) string {
	e.t.Helper()
	res := e.must(req{Method: "POST", Path: version + "/" + keyAcme + "/" + seg, Body: body}, http.StatusCreated)
	loc := res.Header.Get("Location")
	i := strings.LastIndexByte(loc, '/')
	if i < 0 {
		e.t.Fatalf("Location %q has no id", loc)
	}
	return loc[i+1:]
}

// body builds a write body with root and name, value pairs.
func body(root string, nv ...string) string {
	var b strings.Builder
	b.WriteString("<" + root + "><fields>")
	for i := 0; i+1 < len(nv); i += 2 {
		b.WriteString("<field><name>" + nv[i] + "</name><value>" + nv[i+1] + "</value></field>")
	}
	b.WriteString("</fields></" + root + ">")
	return b.String()
}

// on is e reporting to t (a subtest).
func (e *env) on(t testing.TB) *env {
	c := *e
	c.t = t
	return &c
}
