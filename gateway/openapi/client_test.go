package openapi_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/gateway/openapi/internal/client"
)

// TestGeneratedClient uses the client generated from the document against a real gateway in front of the real
// core: it reads a record and a user, creates a record, updates it, finds it by search and deletes it, in JSON.
func TestGeneratedClient(t *testing.T) {
	base := start(t, nil)
	auth := client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.SetBasicAuth("demo", "demo")
		req.Header.Set("Accept", "application/json")
		return nil
	})
	c, err := client.NewClientWithResponses(base, auth)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	// read returns the fields of requirement id by name, as text.
	read := func(id int64) map[string]string {
		t.Helper()
		res, err := c.V2GetRequirementWithResponse(ctx, "demo", id, nil)
		if err != nil {
			t.Fatalf("V2GetRequirement %d: %v", id, err)
		}
		if res.StatusCode() != 200 || res.JSON200 == nil || res.JSON200.Requirement.Fields == nil {
			t.Fatalf("V2GetRequirement %d: status %d, body %s", id, res.StatusCode(), res.Body)
		}
		fields := map[string]string{}
		for _, f := range res.JSON200.Requirement.Fields.Field {
			if f.Name == nil || f.Value == nil {
				continue
			}
			if s, err := f.Value.AsRecordValue0(); err == nil {
				fields[*f.Name] = s
			} else if v, err := f.Value.AsRecordValue1(); err == nil && v.HashText != nil {
				fields[*f.Name] = *v.HashText
			}
		}
		return fields
	}
	if got := read(1); got["id"] != "1" || got["field_103"] == "" || !strings.Contains(got["field_101"], "CSV") {
		t.Errorf("requirement 1 read through the client: %v", got)
	}

	user, err := c.V2GetUserWithResponse(ctx, "demo", "1", nil)
	if err != nil || user.JSON200 == nil {
		t.Fatalf("V2GetUser: %v, %+v", err, user)
	}
	if u, err := user.JSON200.AsUserDocument(); err != nil || u.User.Email == nil || *u.User.Email != "demo@reqgate.test" {
		t.Errorf("user 1: %+v, %v", u, err)
	}

	// write builds a write body of name=value pairs.
	write := func(nv ...string) client.RequirementWriteDocument {
		var fields []client.WriteField
		for i := 0; i < len(nv); i += 2 {
			var v client.WriteValue
			if err := v.FromWriteValue0(nv[i+1]); err != nil {
				t.Fatal(err)
			}
			fields = append(fields, client.WriteField{Name: &nv[i], Value: &v})
		}
		var list client.WriteFieldList
		if err := list.FromWriteFieldList0(fields); err != nil {
			t.Fatal(err)
		}
		return client.RequirementWriteDocument{Requirement: client.RequirementWrite{Fields: &client.WriteFields{Field: list}}}
	}
	created, err := c.V2CreateRequirementWithResponse(ctx, "demo", nil, write("field_101", "Made by a generated client", "field_103", "2"))
	if err != nil || created.StatusCode() != 201 || created.Headers201 == nil {
		t.Fatalf("V2CreateRequirement: %v, status %d, body %s", err, created.StatusCode(), created.Body)
	}
	loc := created.Headers201.Location
	var id int64
	if i := strings.LastIndexByte(loc, '/'); i < 0 || !regexp.MustCompile(`^[0-9]+$`).MatchString(loc[i+1:]) {
		t.Fatalf("Location %q", loc)
	} else {
		for _, d := range loc[i+1:] {
			id = id*10 + int64(d-'0')
		}
	}
	if got := read(id); got["field_101"] != "Made by a generated client" || got["field_103"] != "Accepted - Scheduled" {
		t.Errorf("created requirement %d: %v", id, got)
	}
	updated, err := c.V2UpdateRequirementWithResponse(ctx, "demo", id, nil, write("field_101", "Renamed by a generated client"))
	if err != nil || updated.StatusCode() != 200 {
		t.Fatalf("V2UpdateRequirement: %v, status %d, body %s", err, updated.StatusCode(), updated.Body)
	}
	if got := read(id); got["field_101"] != "Renamed by a generated client" {
		t.Errorf("updated requirement %d: %v", id, got)
	}
	// A time condition has no name=value form: the request editor adds it to the query the client makes.
	found, err := c.V2SearchRequirementWithResponse(ctx, "demo", &client.V2SearchRequirementParams{
		FieldConditions: &client.FieldConditions{"field_103": "2"}}, func(_ context.Context, req *http.Request) error {
		req.URL.RawQuery += "&last_updated_time>1000000000"
		return nil
	})
	if err != nil || found.JSON200 == nil || found.JSON200.SearchResults.Requirement == nil {
		t.Fatalf("V2SearchRequirement: %v, %+v", err, found)
	}
	seen := false
	for _, s := range *found.JSON200.SearchResults.Requirement {
		seen = seen || s.Id != nil && int64(*s.Id) == id
	}
	if !seen {
		t.Errorf("search did not find requirement %d: %s", id, found.Body)
	}
	for _, want := range []int{200, 409} {
		deleted, err := c.V2DeleteRequirementWithResponse(ctx, "demo", id, nil)
		if err != nil || deleted.StatusCode() != want {
			t.Fatalf("V2DeleteRequirement: %v, status %d, want %d", err, deleted.StatusCode(), want)
		}
		if want == 409 && (deleted.JSON409 == nil || deleted.JSON409.Error.Message == nil) {
			t.Errorf("409 without its error document: %s", deleted.Body)
		}
	}
}

// TestGeneratedClientUpToDate regenerates the client from the document with the generator and version that
// internal/client/generate.go names, and compares it with the committed one.
func TestGeneratedClientUpToDate(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("internal", "client", "generate.go"))
	if err != nil {
		t.Fatal(err)
	}
	gen := regexp.MustCompile(`github\.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v[0-9.]+`).Find(src)
	if gen == nil {
		t.Fatal("generate.go names no pinned oapi-codegen")
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, openapi.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := filepath.Abs(filepath.Join("internal", "client", "oapi-codegen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "client.gen.go")
	cmd := exec.CommandContext(t.Context(), "go", "run", string(gen), "-config", cfg, "-o", out, doc)
	// From the temporary directory, so the main module's go.mod is never read or changed.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("internal", "client", "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Error("internal/client/client.gen.go is not what the document generates: run go generate ./gateway/openapi/internal/client")
	}
}
