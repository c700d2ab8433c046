package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
)

// Snapshot renders everything the Store interface shows about an account, to compare states.
func Snapshot(t *testing.T, st core.Store, apiKey string) string {
	t.Helper()
	var b strings.Builder
	a, err := st.Account(ctx, apiKey)
	if err != nil {
		t.Fatalf("Account(%q): %v", apiKey, err)
	}
	fmt.Fprintf(&b, "account %+v\n", a)
	us, err := st.Users(ctx, a.ID)
	if err != nil {
		t.Fatalf("Users: %v", err)
	}
	fmt.Fprintf(&b, "users %+v\n", normUsers(us))
	os, err := st.Objects(ctx, a.ID)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	fmt.Fprintf(&b, "objects %+v\n", os)
	for _, o := range os {
		fs, err := st.Fields(ctx, a.ID, o.APIPrefix)
		if err != nil {
			t.Fatalf("Fields(%s): %v", o.APIPrefix, err)
		}
		fmt.Fprintf(&b, "fields %s %+v\n", o.APIPrefix, fs)
		vs, err := st.Views(ctx, a.ID, o.APIPrefix)
		if err != nil {
			t.Fatalf("Views(%s): %v", o.APIPrefix, err)
		}
		fmt.Fprintf(&b, "views %s %+v\n", o.APIPrefix, vs)
		for _, deleted := range [][]core.Condition{nil, {{Attr: "deleted_time", Op: '>', Value: "0"}}} {
			ms, err := st.Search(ctx, a.ID, o.APIPrefix, deleted)
			if err != nil {
				t.Fatalf("Search(%s): %v", o.APIPrefix, err)
			}
			for _, m := range ms {
				snapshotRecord(t, &b, st, a.ID, m, fs)
			}
		}
	}
	return b.String()
}

// snapshotRecord renders the record of summary m with its relations (when live) and the history of its
// fields fs.
func snapshotRecord(t *testing.T, b *strings.Builder, st core.Store, accountID int64, m core.Summary, fs []core.Field) {
	t.Helper()
	r, err := st.Record(ctx, accountID, m.Kind, m.ID)
	if err != nil {
		t.Fatalf("Record(%s, %d): %v", m.Kind, m.ID, err)
	}
	fmt.Fprintf(b, "record %+v\nsummary %+v\n", r, m)
	if r.DeletedTime == 0 {
		rs, err := st.Related(ctx, accountID, m.Kind, m.ID)
		if err != nil {
			t.Fatalf("Related(%s, %d): %v", m.Kind, m.ID, err)
		}
		fmt.Fprintf(b, "related %+v\n", rs)
	}
	for _, f := range fs {
		h, err := st.History(ctx, accountID, m.Kind, m.ID, f.ID)
		if err != nil {
			t.Fatalf("History(%s, %d, %d): %v", m.Kind, m.ID, f.ID, err)
		}
		if len(h) > 0 {
			fmt.Fprintf(b, "history %d %+v\n", f.ID, h)
		}
	}
}

func testApplyIdempotent(t *testing.T, st core.Store) {
	provisioned(t, st)
	acme1, other1 := Snapshot(t, st, "acme"), Snapshot(t, st, "other")
	for i := range 2 {
		if err := st.Apply(ctx, Fixture()); err != nil {
			t.Fatalf("Apply #%d: %v", i+2, err)
		}
		check(t, fmt.Sprintf("acme after Apply #%d", i+2), Snapshot(t, st, "acme"), acme1)
		check(t, fmt.Sprintf("other after Apply #%d", i+2), Snapshot(t, st, "other"), other1)
	}
	// An empty provision changes nothing.
	if err := st.Apply(ctx, &core.Provision{}); err != nil {
		t.Fatalf("Apply(empty): %v", err)
	}
	check(t, "acme after an empty Apply", Snapshot(t, st, "acme"), acme1)
}

// testApplyUpdatesInPlace: what an account file declares (the account, users, fields, options, views) is
// brought to the file's values, and new relationships are added; its seed records are not (see
// testApplyKeepsExistingRecords).
func testApplyUpdatesInPlace(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)

	p := Fixture()
	a := &p.Accounts[0]
	a.Name = "Acme Corporation"
	a.Users[0].Email = "bob@new.test"                                           // bob keeps id 6
	a.Users[0].PasswordHash = nil                                               // no hash given: the stored one stays
	a.Users = append(a.Users, core.UserSpec{User: core.User{Username: "dave"}}) // gets 8
	re := a.Fields[core.KindRequirement]
	re[0].Label = "Summary"
	re[2].Options = append(re[2].Options, core.Option{Value: 4, Label: "Rejected", Sort: 4})
	re[2].Options[1].Label = "Pending"
	a.Fields[core.KindFeature] = append(a.Fields[core.KindFeature],
		core.Field{Label: "Status", Type: core.TypePickOne, Sort: 9, ListType: core.ListNormal}, // matched by label: 202
		core.Field{Label: "Effort", Type: core.TypeInteger, Sort: 3})                            // new: max id + 1 = 403
	a.Views[1].Name = "Pending"
	a.Relationships = append(a.Relationships, core.RelationshipSpec{FromKind: "re", FromID: 4, ToKind: "ft",
		ToID: 7, Type: "parent"})
	if err := st.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}

	got, err := st.Account(ctx, "acme")
	checkErr(t, "Account", err, nil)
	check(t, "account renamed in place", got, core.Account{ID: acme, APIKey: "acme", Name: "Acme Corporation"})
	us, err := st.Users(ctx, acme)
	checkErr(t, "Users", err, nil)
	var names []string
	for _, u := range us {
		names = append(names, fmt.Sprintf("%d %s %s %s", u.ID, u.Username, u.Email, u.PasswordHash))
	}
	check(t, "users", names, []string{"5 alice alice@acme.test hash-alice", "6 bob bob@new.test hash-bob",
		"7 carol carol@acme.test ", "8 dave  "})

	fs, err := st.Fields(ctx, acme, "re")
	checkErr(t, "Fields", err, nil)
	check(t, "renamed field", fs[1].Label, "Summary")
	check(t, "options of status", fmt.Sprint(fs[3].Options),
		fmt.Sprint([]core.Option{{Value: 1, Label: "Pending", Sort: 1, Default: true},
			{Value: 2, Label: "Accepted - Scheduled", Sort: 2, Desc: "planned"},
			{Value: 3, Label: "Accepted - Unscheduled", Sort: 3}, {Value: 4, Label: "Rejected", Sort: 4}}))
	fs, err = st.Fields(ctx, acme, "ft")
	checkErr(t, "Fields", err, nil)
	var ids []string
	for _, f := range fs {
		ids = append(ids, fmt.Sprintf("%d %s %d %d", f.ID, f.Label, f.Sort, len(f.Options)))
	}
	check(t, "ft fields (Status matched by label, Effort new)", ids,
		[]string{"201 Title 1 0", "403 Effort 3 0", "202 Status 9 2"})

	vs, err := st.Views(ctx, acme, "re")
	checkErr(t, "Views", err, nil)
	check(t, "view names", []string{vs[0].Name, vs[1].Name}, []string{"Pending", "Mine"})

	check(t, "new relationship", relations(t, st, acme, "ft", 7),
		[]string{`Is Child Of re-1 "Export to CSV"`, `Is Child Of re-4 "Print"`})
}

// testApplyKeepsExistingRecords: seed records are created when absent and never written over, since a core
// applies its account files at every start and reload. A client's update, a client's delete and a client's
// create of an id the file seeds later all survive applying the file again, the same file (a restart) or a
// file whose values for those records changed; no version, history entry or search term moves, and the new
// seed records of the file are created.
func testApplyKeepsExistingRecords(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	update(t, st, acme, "re", 2, core.Update{UserID: 5, Time: t3,
		Values: map[int64]string{reTitle: "Imported", reStatus: "3"}})
	checkErr(t, "DeleteRecord(re 4)", st.DeleteRecord(ctx, acme, "re", 4, 6, t3, nil), nil)
	check(t, "client's create", create(t, st, acme, core.Record{Kind: "re", CreatedBy: 6, CreatedTime: t3,
		Values: map[int64]string{reTitle: "Client's"}}).ID, int64(5))
	before := Snapshot(t, st, "acme")

	checkErr(t, "Apply the same file again", st.Apply(ctx, Fixture()), nil)
	check(t, "acme after applying the same file again", Snapshot(t, st, "acme"), before)

	p := Fixture()
	a := &p.Accounts[0]
	a.Records[0].Values[reStatus] = "3" // re 1, which no client changed
	a.Records[0].CreatedByUsername = "bob"
	a.Records[0].CreatedTime = t2
	a.Records[1].Values[reTitle] = "Import v2" // re 2, updated by a client
	a.Records[2].Values[reTitle] = "Print v2"  // re 4, deleted by a client
	a.Records = append(a.Records,
		core.RecordSpec{Kind: "re", ID: 5, CreatedByUsername: "bob", Values: map[int64]string{reTitle: "Seeded 5"}},
		core.RecordSpec{Kind: "re", ID: 8, CreatedByUsername: "bob", CreatedTime: t2,
			Values: map[int64]string{reTitle: "Seeded 8", reStatus: "2"}})
	checkErr(t, "Apply a changed file", st.Apply(ctx, p), nil)

	check(t, "re 1, changed in the file only", record(t, st, acme, "re", 1), core.Record{Kind: "re", ID: 1,
		Version: 1, CreatedTime: t1, CreatedBy: 5, LastUpdatedTime: t1, LastUpdatedBy: 5,
		Values: map[int64]string{reTitle: "Export to CSV", reDesc: "<b>Export</b> the list", reStatus: "1",
			rePlatform: "1,3", reOwner: "6"}})
	r := record(t, st, acme, "re", 2)
	check(t, "re 2, updated by a client", []any{r.Version, r.Values[reTitle], r.Values[reStatus], r.LastUpdatedTime},
		[]any{int64(2), "Imported", "3", int64(t3)})
	h, err := st.History(ctx, acme, "re", 2, reTitle)
	checkErr(t, "History(re 2)", err, nil)
	check(t, "history of re 2's title: the client's change alone", len(h), 1)
	r = record(t, st, acme, "re", 4)
	check(t, "re 4, deleted by a client", []any{r.DeletedTime, r.Values[reTitle]}, []any{int64(t3), "Print"})
	r = record(t, st, acme, "re", 5)
	check(t, "re 5, created by a client before the file seeded it", []any{r.CreatedBy, r.Values[reTitle]},
		[]any{int64(6), "Client's"})
	check(t, "re 8, new in the file", record(t, st, acme, "re", 8), core.Record{Kind: "re", ID: 8, Version: 1,
		CreatedTime: t2, CreatedBy: 6, LastUpdatedTime: t2, LastUpdatedBy: 6,
		Values: map[int64]string{reTitle: "Seeded 8", reStatus: "2"}})
	check(t, "search follows the records, not the file", search(t, st, acme, "re", "field_103=3"), []int64{2})
	check(t, "search finds the new seed record", search(t, st, acme, "re", "field_103=2"), []int64{8})
	check(t, "the deleted record stays out of searches", search(t, st, acme, "re", "field_101=Print"), []int64{})
	check(t, "next id after the new seed record", create(t, st, acme, core.Record{Kind: "re", CreatedBy: 5}).ID,
		int64(9))
}

// testApplySeedDefaults: a seed record gets the values a create through the interface gets
// (core.AddDefaults): a field it leaves out gets its default_value or default options, a field it gives,
// even empty, keeps its value, and a required field left out refuses the file.
func testApplySeedDefaults(t *testing.T, st core.Store) {
	p := Fixture()
	a := &p.Accounts[0]
	re := a.Fields[core.KindRequirement] // title, description, status (default option 1), owner, platforms, estimate
	re[3].DefaultValue = "5"             // alice
	re[4].Options[0].Default, re[4].Options[2].Default = true, true
	re[5].DefaultValue = "3"
	a.Records = append(a.Records,
		core.RecordSpec{Kind: "re", ID: 20, CreatedByUsername: "bob", Values: map[int64]string{reTitle: "Defaults"}},
		core.RecordSpec{Kind: "re", ID: 21, CreatedByUsername: "bob", Values: map[int64]string{reTitle: "Given",
			reStatus: "2", reOwner: "", rePlatform: "2"}})
	checkErr(t, "Apply", st.Apply(ctx, p), nil)
	acme := accountID(t, st, "acme")
	got := record(t, st, acme, "re", 20).Values
	check(t, "seed record leaving fields out", got, map[int64]string{reTitle: "Defaults", reStatus: "1",
		reOwner: "5", rePlatform: "1,3", reEstimate: "3"})
	check(t, "seed record giving them", record(t, st, acme, "re", 21).Values, map[int64]string{reTitle: "Given",
		reStatus: "2", rePlatform: "2", reEstimate: "3"})
	check(t, "search finds the default option", search(t, st, acme, "re", "field_103=1"), []int64{1, 4, 20})

	fs, err := st.Fields(ctx, acme, "re")
	checkErr(t, "Fields", err, nil)
	created := map[int64]string{reTitle: "Defaults"}
	checkErr(t, "AddDefaults", core.AddDefaults(fs, created, func(id int64) bool { return id >= 5 && id <= 7 }), nil)
	check(t, "the values of a create through the interface", cleanValues(created), got)

	a.Records = append(a.Records, core.RecordSpec{Kind: "re", ID: 22, CreatedByUsername: "bob",
		Values: map[int64]string{reStatus: "2"}})
	err = st.Apply(ctx, p)
	checkErr(t, "Apply with a seed record leaving out a required field", err, core.ErrInvalid)
	if err != nil && !strings.Contains(err.Error(), "field_101") {
		t.Errorf("Apply: error %q does not name field_101", err)
	}
	_, err = st.Record(ctx, acme, "re", 22)
	checkErr(t, "Record(re 22) after the refused Apply", err, core.ErrNotFound)
}

// cleanValues drops the empty values, as a store does.
func cleanValues(v map[int64]string) map[int64]string {
	out := map[int64]string{}
	for k, s := range v {
		if s != "" {
			out[k] = s
		}
	}
	return out
}

func testApplyAllOrNothing(t *testing.T, st core.Store) {
	bad := Fixture()
	bad.Accounts[1].Relationships = []core.RelationshipSpec{{FromKind: "re", FromID: 9, ToKind: "nope", ToID: 99,
		Type: "related"}}
	if err := st.Apply(ctx, bad); err == nil {
		t.Fatalf("Apply with a relationship to an unknown kind: no error")
	}
	empty, err := st.Empty(ctx)
	checkErr(t, "Empty", err, nil)
	check(t, "Empty after a failed Apply", empty, true)

	provisioned(t, st)
	before := Snapshot(t, st, "acme")
	bad = Fixture()
	a := &bad.Accounts[0]
	a.Name = "Renamed"
	a.Users = append(a.Users, core.UserSpec{User: core.User{Username: "erin"}})
	a.Records = append(a.Records, core.RecordSpec{Kind: "re", ID: 50, CreatedByUsername: "erin"})
	a.Records[0].Values[reTitle] = "Changed"
	a.Relationships = append(a.Relationships, core.RelationshipSpec{FromKind: "re", FromID: 50, ToKind: "nope",
		ToID: 77, Type: "parent"})
	if err := st.Apply(ctx, bad); err == nil {
		t.Fatalf("Apply with a relationship to an unknown kind: no error")
	}
	check(t, "acme after a failed Apply", Snapshot(t, st, "acme"), before)
	check(t, "next id after a failed Apply", create(t, st, accountID(t, st, "acme"),
		core.Record{Kind: "re", CreatedBy: 5}).ID, int64(5))
}

func testApplyErrors(t *testing.T, st core.Store) {
	tests := []struct {
		name   string
		change func(a *core.AccountSpec)
		naming string // the error must name this
	}{
		{"view by unknown user", func(a *core.AccountSpec) { a.Views[0].CreatedByUsername = "zed" }, "zed"},
		{"record by unknown user", func(a *core.AccountSpec) { a.Records[2].CreatedByUsername = "zed" }, "zed"},
		{"relationship from a missing kind", func(a *core.AccountSpec) {
			a.Relationships[0].FromKind = "nope"
		}, "nope"},
		{"record of an unknown kind", func(a *core.AccountSpec) { a.Records[1].Kind = "nope" }, "nope"},
		{"view of an unknown kind", func(a *core.AccountSpec) { a.Views[1].Kind = "nope" }, "nope"},
		{"record with an unknown field", func(a *core.AccountSpec) { a.Records[0].Values[999] = "x" }, "999"},
		{"relationship of an unknown type", func(a *core.AccountSpec) { a.Relationships[0].Type = "sibling" }, "sibling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Fixture()
			tc.change(&p.Accounts[0])
			err := st.Apply(ctx, p)
			if err == nil {
				t.Fatalf("Apply: no error")
			}
			if !strings.Contains(err.Error(), tc.naming) {
				t.Errorf("Apply: error %q does not name %q", err, tc.naming)
			}
			empty, err := st.Empty(ctx)
			checkErr(t, "Empty", err, nil)
			check(t, "Empty after a failed Apply", empty, true)
		})
	}
}

func testAccountsAreSeparate(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	update(t, st, other, "re", 9, core.Update{UserID: 5, Time: t3, Values: map[int64]string{reTitle: "Changed"}})
	h, err := st.History(ctx, acme, "re", 9, reTitle)
	checkErr(t, "History of another account's record", err, core.ErrNotFound)
	check(t, "History of another account's record", len(h), 0)
	_, err = st.UpdateRecord(ctx, acme, "re", 9, core.Unconditional(core.Update{UserID: 5, Time: t3}))
	checkErr(t, "UpdateRecord of another account's record", err, core.ErrNotFound)
	checkErr(t, "DeleteRecord of another account's record", st.DeleteRecord(ctx, other, "re", 1, 5, t3, nil), core.ErrNotFound)
	check(t, "acme's re 1 after the attempt", record(t, st, acme, "re", 1).DeletedTime, int64(0))
	check(t, "Search(acme, field_101=Changed)", search(t, st, acme, "re", "field_101=Changed"), []int64{})
	check(t, "Search(other, field_101=Changed)", search(t, st, other, "re", "field_101=Changed"), []int64{9})
	fs, err := st.Fields(ctx, other, "re")
	checkErr(t, "Fields(other, re)", err, nil)
	check(t, "Fields(other, re) count", len(fs), 1)
}

// testApplyDanglingRelationship: a relationship may name a record that does not exist yet (the contract's own
// example links RE-1 to RSK-3 without seeding RSK-3). It is stored, hidden from Related while the record is
// missing, and shows once the record exists.
func testApplyDanglingRelationship(t *testing.T, st core.Store) {
	p := Fixture()
	a := &p.Accounts[0]
	a.Relationships = append(a.Relationships, core.RelationshipSpec{FromKind: "ft", FromID: 7, ToKind: "uc",
		ToID: 77, Type: "parent"})
	checkErr(t, "Apply with a relationship to a record not created yet", st.Apply(ctx, p), nil)
	acme := accountID(t, st, "acme")
	before := relations(t, st, acme, "ft", 7)
	for _, r := range before {
		if strings.Contains(r, "uc-77") {
			t.Fatalf("Related shows the missing record uc-77: %q", before)
		}
	}
	a.Records = append(a.Records, core.RecordSpec{Kind: "uc", ID: 77, CreatedByUsername: a.Users[0].Username})
	checkErr(t, "Apply seeding uc-77", st.Apply(ctx, p), nil)
	after := relations(t, st, acme, "ft", 7)
	found := false
	for _, r := range after {
		found = found || strings.HasPrefix(r, "Is Parent Of uc-77")
	}
	if !found {
		t.Fatalf("Related after uc-77 exists: %q, want an Is Parent Of uc-77 item", after)
	}
}
