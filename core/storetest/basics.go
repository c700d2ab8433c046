package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/reqgate/reqgate/core"
)

var ctx = context.Background()

// check fails the test when got and want differ.
func check[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// checkErr fails the test unless err matches want (nil: no error).
func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

func testEmptyAndPing(t *testing.T, st core.Store) {
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	empty, err := st.Empty(ctx)
	checkErr(t, "Empty", err, nil)
	check(t, "Empty on a new store", empty, true)
	provisioned(t, st)
	empty, err = st.Empty(ctx)
	checkErr(t, "Empty", err, nil)
	check(t, "Empty after Apply", empty, false)
	checkErr(t, "Ping", st.Ping(ctx), nil)
}

func testAccount(t *testing.T, st core.Store) {
	_, err := st.Account(ctx, "acme")
	checkErr(t, "Account before Apply", err, core.ErrNotFound)
	acme, other := provisioned(t, st)
	if acme == other {
		t.Fatalf("two accounts share id %d", acme)
	}
	a, err := st.Account(ctx, "acme")
	checkErr(t, "Account", err, nil)
	check(t, "Account", a, core.Account{ID: acme, APIKey: "acme", Name: "Acme Corp"})
	for _, key := range []string{"ACME", "nope", "", "acme "} {
		_, err := st.Account(ctx, key)
		checkErr(t, fmt.Sprintf("Account(%q)", key), err, core.ErrNotFound)
	}
}

func testUsers(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	us, err := st.Users(ctx, acme)
	checkErr(t, "Users", err, nil)
	want := []core.User{
		{ID: 5, Username: "alice", Email: "alice@acme.test", FirstName: "Alice", LastName: "Archer",
			Status: "Active", PasswordHash: []byte("hash-alice")},
		{ID: 6, Username: "bob", Email: "bob@acme.test", FirstName: "Bob", LastName: "Baker", Status: "Active",
			PasswordHash: []byte("hash-bob")},
		{ID: 7, Username: "carol", Email: "carol@acme.test", FirstName: "Carol", Status: "Inactive"},
	}
	check(t, "Users (ids assigned max+1 in file order, after explicit ids)", normUsers(us), want)

	u, err := st.UserByName(ctx, acme, "bob")
	checkErr(t, "UserByName", err, nil)
	check(t, "UserByName(bob)", normUsers([]core.User{u}), want[1:2])
	for _, tc := range []struct {
		account  int64
		username string
	}{{acme, "Bob"}, {acme, "dave"}, {other, "bob"}, {acme + other + 100, "alice"}} {
		_, err := st.UserByName(ctx, tc.account, tc.username)
		checkErr(t, fmt.Sprintf("UserByName(%d, %q)", tc.account, tc.username), err, core.ErrNotFound)
	}
	us, err = st.Users(ctx, other)
	checkErr(t, "Users(other)", err, nil)
	check(t, "Users(other)", len(us), 1)
}

// normUsers makes an empty password hash nil, so stores may return either.
func normUsers(us []core.User) []core.User {
	for i := range us {
		if len(us[i].PasswordHash) == 0 {
			us[i].PasswordHash = nil
		}
	}
	return us
}

var urlSafe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func testObjects(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	os, err := st.Objects(ctx, acme)
	checkErr(t, "Objects", err, nil)
	var got []core.Object
	seen := map[string]bool{}
	for _, o := range os {
		if !urlSafe.MatchString(o.UniqueID) || seen[o.UniqueID] {
			t.Errorf("object %s: UniqueID %q is not URL-safe or not unique", o.APIPrefix, o.UniqueID)
		}
		seen[o.UniqueID] = true
		o.UniqueID = ""
		got = append(got, o)
	}
	want := []core.Object{
		{APIPrefix: "re", NameSingular: "Requirement", NamePlural: "Requirements", IDPrefix: "RE"},
		{APIPrefix: "ft", NameSingular: "Feature", NamePlural: "Features", IDPrefix: "FT"},
		{APIPrefix: "uc", NameSingular: "Use Case", NamePlural: "Use Cases", IDPrefix: "UC"},
		{APIPrefix: "bug", NameSingular: "Bug", NamePlural: "Bugs", IDPrefix: "BUG", Custom: true},
		{APIPrefix: "risk", NameSingular: "Risk", NamePlural: "Risks", IDPrefix: "RSK", Description: "Project risks",
			Custom: true},
	}
	check(t, "Objects (built-ins, then custom by api_prefix)", got, want)

	// The unique ids are stable across a second Apply and differ between accounts.
	if err := st.Apply(ctx, Fixture()); err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	again, err := st.Objects(ctx, acme)
	checkErr(t, "Objects", err, nil)
	check(t, "Objects after a second Apply", again, os)
	oos, err := st.Objects(ctx, other)
	checkErr(t, "Objects(other)", err, nil)
	check(t, "Objects(other) count (the built-ins only)", len(oos), 3)
	for _, o := range oos {
		if seen[o.UniqueID] {
			t.Errorf("object_unique_id %q of account other also belongs to acme", o.UniqueID)
		}
	}
}

func testFields(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	fs, err := st.Fields(ctx, acme, core.KindRequirement)
	checkErr(t, "Fields(re)", err, nil)
	var ids []int64
	for _, f := range fs {
		ids = append(ids, f.ID)
		if f.Kind != core.KindRequirement {
			t.Errorf("field %d: Kind %q, want re", f.ID, f.Kind)
		}
	}
	check(t, "Fields(re) order (sort, then id)", ids, []int64{reEstimate, reTitle, reDesc, reStatus, reOwner, rePlatform})
	byID := map[int64]core.Field{}
	for _, f := range fs {
		byID[f.ID] = f
	}
	check(t, "Title field", byID[reTitle], core.Field{ID: reTitle, Kind: "re", Label: "Title", Type: core.TypeTextbox,
		SpecialPurpose: "title", Required: true, Sort: 1, MaxSize: 255})
	check(t, "Status options (by sort)", byID[reStatus].Options, []core.Option{
		{Value: 1, Label: "Pending Review", Sort: 1, Default: true},
		{Value: 2, Label: "Accepted - Scheduled", Sort: 2, Desc: "planned"},
		{Value: 3, Label: "Accepted - Unscheduled", Sort: 3},
	})
	check(t, "Owner list type", byID[reOwner].ListType, core.ListUser)
	check(t, "Owner options", len(byID[reOwner].Options), 0)
	check(t, "Estimate help", byID[reEstimate].Help, "days")

	fs, err = st.Fields(ctx, acme, core.KindFeature)
	checkErr(t, "Fields(ft)", err, nil)
	check(t, "Fields(ft) count", len(fs), 2)
	check(t, "Fields(ft) tie on sort broken by id", []int64{fs[0].ID, fs[1].ID}, []int64{ftTitle, ftStatus})
	fs, err = st.Fields(ctx, acme, "risk")
	checkErr(t, "Fields(risk)", err, nil)
	check(t, "Fields(risk) count", len(fs), 2)
	fs, err = st.Fields(ctx, acme, "bug")
	checkErr(t, "Fields(bug) (a kind without fields)", err, nil)
	check(t, "Fields(bug) count", len(fs), 0)
	for _, kind := range []string{"nope", "RE", "user", ""} {
		_, err := st.Fields(ctx, acme, kind)
		checkErr(t, fmt.Sprintf("Fields(%q)", kind), err, core.ErrNotFound)
	}
}

func testViews(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	vs, err := st.Views(ctx, acme, core.KindRequirement)
	checkErr(t, "Views(re)", err, nil)
	check(t, "Views(re) (ordered by id)", vs, []core.View{
		{ID: 12, Kind: "re", Name: "Pending review", Description: "Everything not yet triaged", CreatedBy: 5,
			Conditions: "field_103=1"},
		{ID: 13, Kind: "re", Name: "Mine", CreatedBy: 6, Conditions: "created_by=5"},
	})
	vs, err = st.Views(ctx, acme, "risk")
	checkErr(t, "Views(risk)", err, nil)
	check(t, "Views(risk)", vs, []core.View{{ID: 20, Kind: "risk", Name: "All risks", CreatedBy: 5}})
	vs, err = st.Views(ctx, acme, core.KindFeature)
	checkErr(t, "Views(ft)", err, nil)
	check(t, "Views(ft) count", len(vs), 0)
	vs, err = st.Views(ctx, other, core.KindRequirement)
	checkErr(t, "Views(other, re)", err, nil)
	check(t, "Views(other, re) count", len(vs), 0)
}
