package openapi_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/gateway/openapi/internal/client"
)

// TestGeneratedClient uses the client generated from the document against a real gateway in front of the real
// core: it reads a record and a user, creates a record, updates it, finds it by search (a picklist condition and
// a time range, through the parameters the document describes, nothing added to the query by hand) and deletes
// it, in JSON. What every response has is typed as present (no pointers): the test reads it as such.
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
		if res.StatusCode() != 200 || res.JSON200 == nil {
			t.Fatalf("V2GetRequirement %d: status %d, body %s", id, res.StatusCode(), res.Body)
		}
		fields := map[string]string{}
		for _, f := range res.JSON200.Requirement.Fields.Field {
			if f.Value == nil {
				continue
			}
			if s, err := f.Value.AsRecordValue0(); err == nil {
				fields[f.Name] = s
			} else if v, err := f.Value.AsRecordValue1(); err == nil && v.HashText != nil {
				fields[f.Name] = *v.HashText
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
	if u, err := user.JSON200.AsUserDocument(); err != nil || u.User.Email != "demo@reqgate.test" || u.User.Status != "Active" {
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
			fields = append(fields, client.WriteField{Name: nv[i], Value: &v})
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
	// The picklist condition as a field_conditions property, the time range as q values: the client sends
	// field_103=2&q=last_updated_time%3E...&q=last_updated_time%3C....
	now := time.Now().Unix()
	search := func(p client.V2SearchRequirementParams) []client.RequirementSummary {
		t.Helper()
		found, err := c.V2SearchRequirementWithResponse(ctx, "demo", &p)
		if err != nil || found.StatusCode() != 200 || found.JSON200 == nil {
			t.Fatalf("V2SearchRequirement: %v, status %d, body %s", err, found.StatusCode(), found.Body)
		}
		if found.JSON200.SearchResults.Requirement == nil {
			return nil
		}
		return *found.JSON200.SearchResults.Requirement
	}
	timeRange := func(from, to int64) *client.Q {
		return &client.Q{"last_updated_time>" + strconv.FormatInt(from, 10), "last_updated_time<" + strconv.FormatInt(to, 10)}
	}
	hits := search(client.V2SearchRequirementParams{FieldConditions: &client.FieldConditions{"field_103": "2"}, Q: timeRange(now-3600, now+3600)})
	if len(hits) != 1 || hits[0].Id != int(id) || hits[0].Title != "Renamed by a generated client" || hits[0].IdPrefix != "RE-" ||
		hits[0].LastUpdatedTime.Unit != "GMT Timestamp" || int64(hits[0].LastUpdatedTime.HashText) < now-3600 {
		t.Errorf("search by picklist and time range: %+v, want requirement %d alone", hits, id)
	}
	if hits := search(client.V2SearchRequirementParams{Q: &client.Q{"field_103=2"}}); len(hits) == 0 {
		t.Errorf("search with q=field_103=2 found nothing")
	}
	if hits := search(client.V2SearchRequirementParams{FieldConditions: &client.FieldConditions{"field_103": "2"}, Q: timeRange(now+3600, now+7200)}); len(hits) != 0 {
		t.Errorf("search by a time range in the future: %+v, want nothing", hits)
	}
	bad, err := c.V2SearchRequirementWithResponse(ctx, "demo", &client.V2SearchRequirementParams{Q: &client.Q{"created_time>=1262493473"}})
	if err != nil || bad.StatusCode() != 400 || bad.JSON400 == nil ||
		!strings.Contains(bad.JSON400.Error.Message, "the operator >= is not supported") {
		t.Errorf("search with an invalid condition: %v, %+v", err, bad)
	}
	for _, want := range []int{200, 409} {
		deleted, err := c.V2DeleteRequirementWithResponse(ctx, "demo", id, nil)
		if err != nil || deleted.StatusCode() != want {
			t.Fatalf("V2DeleteRequirement: %v, status %d, want %d", err, deleted.StatusCode(), want)
		}
		if want == 409 && (deleted.JSON409 == nil || deleted.JSON409.Error.Message == "") {
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
