package storetest

import (
	"fmt"
	"testing"

	"github.com/reqgate/reqgate/core"
)

func record(t *testing.T, st core.Store, account int64, kind string, id int64) core.Record {
	t.Helper()
	r, err := st.Record(ctx, account, kind, id)
	if err != nil {
		t.Fatalf("Record(%s, %d): %v", kind, id, err)
	}
	return r
}

func create(t *testing.T, st core.Store, account int64, r core.Record) core.Record {
	t.Helper()
	got, err := st.CreateRecord(ctx, account, r)
	if err != nil {
		t.Fatalf("CreateRecord(%+v): %v", r, err)
	}
	return got
}

func update(t *testing.T, st core.Store, account int64, kind string, id int64, u core.Update) core.Record {
	t.Helper()
	got, err := st.UpdateRecord(ctx, account, kind, id, core.Unconditional(u))
	if err != nil {
		t.Fatalf("UpdateRecord(%s, %d, %+v): %v", kind, id, u, err)
	}
	return got
}

func testSeedRecords(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	check(t, "seed re 1", record(t, st, acme, "re", 1), core.Record{Kind: "re", ID: 1, Version: 1,
		CreatedTime: t1, CreatedBy: 5, LastUpdatedTime: t1, LastUpdatedBy: 5,
		Values: map[int64]string{reTitle: "Export to CSV", reDesc: "<b>Export</b> the list", reStatus: "1",
			rePlatform: "1,3", reOwner: "6"}})
	check(t, "seed re 2 (empty values left out)", record(t, st, acme, "re", 2).Values,
		map[int64]string{reTitle: "Import", reStatus: "2", rePlatform: "3"})
	check(t, "seed risk 3", record(t, st, acme, "risk", 3).Values,
		map[int64]string{riskTitle: "Late delivery", riskSev: "2"})
	check(t, "seed of other", record(t, st, other, "re", 9).Values, map[int64]string{reTitle: "Other's record"})
	for _, tc := range []struct {
		account int64
		kind    string
		id      int64
	}{{acme, "re", 3}, {acme, "re", 9}, {other, "re", 1}, {acme, "ft", 1}, {acme, "nope", 1}, {acme, "re", 0},
		{acme, "re", -1}} {
		_, err := st.Record(ctx, tc.account, tc.kind, tc.id)
		checkErr(t, fmt.Sprintf("Record(%d, %s, %d)", tc.account, tc.kind, tc.id), err, core.ErrNotFound)
	}
}

func testCreateRecord(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	in := core.Record{Kind: "re", CreatedTime: t3 + 10, CreatedBy: 6, VersionComment: "first",
		// Stores ignore what the caller puts in these.
		ID: 99, Version: 7, LastUpdatedTime: 1, LastUpdatedBy: 1, DeletedTime: 3,
		Values: map[int64]string{reTitle: "New", reStatus: "3", reDesc: ""}}
	got := create(t, st, acme, in)
	want := core.Record{Kind: "re", ID: 5, Version: 1, CreatedTime: t3 + 10, CreatedBy: 6,
		LastUpdatedTime: t3 + 10, LastUpdatedBy: 6, VersionComment: "first",
		Values: map[int64]string{reTitle: "New", reStatus: "3"}}
	check(t, "CreateRecord (next id after the highest seed id 4)", got, want)
	check(t, "Record after create", record(t, st, acme, "re", 5), want)
	check(t, "second create", create(t, st, acme, core.Record{Kind: "re", CreatedTime: t3, CreatedBy: 5}).ID, int64(6))
	check(t, "first create of ft (after seed 7)", create(t, st, acme, core.Record{Kind: "ft", CreatedBy: 5}).ID, int64(8))
	check(t, "first create of bug (no seed)", create(t, st, acme, core.Record{Kind: "bug", CreatedBy: 5}).ID, int64(1))
	check(t, "ids are per account", create(t, st, other, core.Record{Kind: "re", CreatedBy: 5}).ID, int64(10))
	got6 := record(t, st, acme, "re", 6)
	if got6.Values == nil {
		t.Errorf("a record without values has nil Values; want an empty map")
	}
	_, err := st.CreateRecord(ctx, acme, core.Record{Kind: "nope", CreatedBy: 5})
	checkErr(t, "CreateRecord of an unknown kind", err, core.ErrNotFound)
	_, err = st.CreateRecord(ctx, other, core.Record{Kind: "risk", CreatedBy: 5})
	checkErr(t, "CreateRecord of another account's kind", err, core.ErrNotFound)
}

func testUpdateRecord(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	comment := "triaged"
	got := update(t, st, acme, "re", 1, core.Update{UserID: 6, Time: t3 + 1, VersionComment: &comment,
		Values: map[int64]string{reStatus: "2", reTitle: "Export to CSV", reDesc: "", reEstimate: "3"}})
	want := core.Record{Kind: "re", ID: 1, Version: 2, CreatedTime: t1, CreatedBy: 5, LastUpdatedTime: t3 + 1,
		LastUpdatedBy: 6, VersionComment: "triaged",
		Values: map[int64]string{reTitle: "Export to CSV", reStatus: "2", rePlatform: "1,3", reOwner: "6",
			reEstimate: "3"}}
	check(t, "UpdateRecord", got, want)
	check(t, "Record after update", record(t, st, acme, "re", 1), want)

	// An update that changes nothing makes no version: not the values it sends again, nor the comment of the
	// current version sent again, nor an empty comment.
	empty := ""
	for _, u := range []core.Update{
		{UserID: 5, Time: t3 + 2, Values: map[int64]string{reStatus: "2", reDesc: ""}},
		{UserID: 5, Time: t3 + 2, Values: map[int64]string{reTitle: "Export to CSV"}, VersionComment: &comment},
		{UserID: 5, Time: t3 + 2, VersionComment: &empty},
		{UserID: 5, Time: t3 + 2},
	} {
		check(t, fmt.Sprintf("UpdateRecord without changes %+v", u), update(t, st, acme, "re", 1, u), want)
	}
	check(t, "Record after updates without changes", record(t, st, acme, "re", 1), want)
	h, err := st.History(ctx, acme, "re", 1, reStatus)
	checkErr(t, "History", err, nil)
	check(t, "history entries of status", len(h), 1)

	// A comment belongs to the version that carried it: the next change without one clears it.
	got = update(t, st, acme, "re", 1, core.Update{UserID: 5, Time: t3 + 3, Values: map[int64]string{reStatus: "3"}})
	want.Version, want.LastUpdatedTime, want.LastUpdatedBy, want.VersionComment = 3, t3+3, 5, ""
	want.Values[reStatus] = "3"
	check(t, "UpdateRecord without a comment", got, want)

	// A new comment alone makes a version, with no field change.
	again := "reviewed"
	got = update(t, st, acme, "re", 1, core.Update{UserID: 6, Time: t3 + 4, VersionComment: &again})
	want.Version, want.LastUpdatedTime, want.LastUpdatedBy, want.VersionComment = 4, t3+4, 6, "reviewed"
	check(t, "UpdateRecord with a new comment only", got, want)
	h, err = st.History(ctx, acme, "re", 1, reStatus)
	checkErr(t, "History", err, nil)
	check(t, "history entries of status", len(h), 2)

	for _, tc := range []struct {
		kind string
		id   int64
	}{{"re", 3}, {"nope", 1}, {"ft", 1}} {
		_, err := st.UpdateRecord(ctx, acme, tc.kind, tc.id, core.Unconditional(core.Update{UserID: 5, Time: t3}))
		checkErr(t, fmt.Sprintf("UpdateRecord(%s, %d)", tc.kind, tc.id), err, core.ErrNotFound)
	}
}

func testDeleteRecord(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	before := record(t, st, acme, "re", 2)
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 2, 5, t3+50, nil), nil)
	after := record(t, st, acme, "re", 2)
	check(t, "DeletedTime after delete", after.DeletedTime, int64(t3+50))
	after.DeletedTime = 0
	check(t, "a deleted record keeps everything else", after, before)
	checkErr(t, "second DeleteRecord", st.DeleteRecord(ctx, acme, "re", 2, 5, t3+60, nil), core.ErrConflict)
	check(t, "DeletedTime after the refused second delete", record(t, st, acme, "re", 2).DeletedTime, int64(t3+50))
	checkErr(t, "DeleteRecord of a missing record", st.DeleteRecord(ctx, acme, "re", 99, 5, t3, nil), core.ErrNotFound)
	checkErr(t, "DeleteRecord of an unknown kind", st.DeleteRecord(ctx, acme, "nope", 1, 5, t3, nil), core.ErrNotFound)
	_, err := st.UpdateRecord(ctx, acme, "re", 2, core.Unconditional(core.Update{UserID: 5, Time: t3 + 70,
		Values: map[int64]string{reTitle: "x"}}))
	checkErr(t, "UpdateRecord of a deleted record", err, core.ErrNotFound)
	// A deleted record's id is never given again.
	check(t, "create after deleting the newest", create(t, st, acme, core.Record{Kind: "re", CreatedBy: 5}).ID, int64(5))
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 5, 5, t3+80, nil), nil)
	check(t, "create after deleting the newest", create(t, st, acme, core.Record{Kind: "re", CreatedBy: 5}).ID, int64(6))
}

func testHistory(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	h, err := st.History(ctx, acme, "re", 1, reStatus)
	checkErr(t, "History of a seed record", err, nil)
	check(t, "History of a seed record (seed data writes none)", h, []core.Change{})

	update(t, st, acme, "re", 1, core.Update{UserID: 6, Time: t3 + 1, Values: map[int64]string{reStatus: "2",
		reTitle: "Export"}})
	update(t, st, acme, "re", 1, core.Update{UserID: 7, Time: t3 + 2, Values: map[int64]string{reStatus: "2"}})
	update(t, st, acme, "re", 1, core.Update{UserID: 5, Time: t3 + 3, Values: map[int64]string{reStatus: ""}})
	update(t, st, acme, "re", 1, core.Update{UserID: 5, Time: t3 + 4, Values: map[int64]string{reStatus: "3",
		rePlatform: "2"}})
	h, err = st.History(ctx, acme, "re", 1, reStatus)
	checkErr(t, "History", err, nil)
	check(t, "History of status (oldest first, unchanged values not recorded)", h, []core.Change{
		{FieldID: reStatus, UserID: 6, Time: t3 + 1, Old: "1", New: "2"},
		{FieldID: reStatus, UserID: 5, Time: t3 + 3, Old: "2", New: ""},
		{FieldID: reStatus, UserID: 5, Time: t3 + 4, Old: "", New: "3"},
	})
	h, err = st.History(ctx, acme, "re", 1, rePlatform)
	checkErr(t, "History", err, nil)
	check(t, "History of platforms", h, []core.Change{{FieldID: rePlatform, UserID: 5, Time: t3 + 4, Old: "1,3", New: "2"}})
	h, err = st.History(ctx, acme, "re", 1, reTitle)
	checkErr(t, "History", err, nil)
	check(t, "History of title", len(h), 1)
	h, err = st.History(ctx, acme, "re", 2, reStatus)
	checkErr(t, "History of another record", err, nil)
	check(t, "History of another record", len(h), 0)

	// A deleted record keeps its history.
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 1, 5, t3+9, nil), nil)
	h, err = st.History(ctx, acme, "re", 1, reStatus)
	checkErr(t, "History of a deleted record", err, nil)
	check(t, "History of a deleted record", len(h), 3)

	for _, tc := range []struct {
		kind string
		id   int64
	}{{"re", 3}, {"nope", 1}, {"ft", 1}} {
		_, err := st.History(ctx, acme, tc.kind, tc.id, reStatus)
		checkErr(t, fmt.Sprintf("History(%s, %d)", tc.kind, tc.id), err, core.ErrNotFound)
	}
}
