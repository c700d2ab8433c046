package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/sqlite"
	"golang.org/x/crypto/bcrypt"
)

// A core over a SQLite file: provision an account, create a requirement, read where Location points.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "reqgate-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "core.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	hash, _ := bcrypt.GenerateFromPassword([]byte("alice-secret"), bcrypt.MinCost)
	err = st.Apply(ctx, &core.Provision{Accounts: []core.AccountSpec{{
		APIKey: "acme",
		Users:  []core.UserSpec{{User: core.User{ID: 5, Username: "alice", PasswordHash: hash}}},
		Fields: map[string][]core.Field{"re": {{ID: 101, Kind: "re", Label: "Title", Type: core.TypeTextbox, Sort: 1}}},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The values of the default configuration (package config): 1 MiB bodies, credentials trusted 60s,
	// schemas kept 2s.
	handler, err := api.New(st, api.Options{MaxBodyBytes: 1 << 20, AuthTTL: time.Minute, SchemaTTL: 2 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	body := `<requirement><fields><field><name>field_101</name><value>Export to CSV</value></field></fields></requirement>`
	r, _ := http.NewRequest("POST", srv.URL+"/api2/acme/re", strings.NewReader(body))
	r.SetBasicAuth("alice", "alice-secret")
	r.Header.Set("Content-Type", "application/xml")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	fmt.Println(res.StatusCode, strings.TrimPrefix(loc, srv.URL))

	r, _ = http.NewRequest("GET", loc, nil)
	r.SetBasicAuth("alice", "alice-secret")
	res, err = http.DefaultClient.Do(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("Content-Type"))
	// Output:
	// 201 /api2/acme/re/1
	// 200 application/xml; charset=utf-8
}
