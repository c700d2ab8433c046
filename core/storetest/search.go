package storetest

import (
	"fmt"
	"testing"

	"github.com/reqgate/reqgate/core"
)

// search runs the condition text against a kind as the HTTP layer would (ParseConditions, CheckConditions,
// Search) and returns the ids found.
func search(t *testing.T, st core.Store, account int64, kind, conds string) []int64 {
	t.Helper()
	cs, err := core.ParseConditions(conds)
	if err != nil {
		t.Fatalf("ParseConditions(%q): %v", conds, err)
	}
	fs, err := st.Fields(ctx, account, kind)
	if err != nil {
		t.Fatalf("Fields(%s): %v", kind, err)
	}
	if err := core.CheckConditions(cs, fs); err != nil {
		t.Fatalf("CheckConditions(%q): %v", conds, err)
	}
	ms, err := st.Search(ctx, account, kind, cs)
	if err != nil {
		t.Fatalf("Search(%s, %q): %v", kind, conds, err)
	}
	ids := []int64{}
	for _, m := range ms {
		if m.Kind != kind {
			t.Errorf("Search(%s, %q): summary of kind %q", kind, conds, m.Kind)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

func testSearch(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	// re 1 (alice, t1, status 1, platforms 1,3, owner bob), re 2 (bob, t2, status 2, platforms 3),
	// re 4 (alice, t3, status 1, platforms 2); then re 5 created by carol and updated by bob; re 6 deleted.
	comment := "c"
	create(t, st, acme, core.Record{Kind: "re", CreatedBy: 7, CreatedTime: t3 + 100,
		Values: map[int64]string{reTitle: "Report9", reStatus: "3", rePlatform: "1,2,3", reOwner: "7"}})
	update(t, st, acme, "re", 5, core.Update{UserID: 6, Time: t3 + 200, VersionComment: &comment,
		Values: map[int64]string{reStatus: "2", reTitle: "ReportX"}})
	create(t, st, acme, core.Record{Kind: "re", CreatedBy: 5, CreatedTime: t3 + 300,
		Values: map[int64]string{reTitle: "Gone", reStatus: "1"}})
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 6, 5, t3+400, nil), nil)

	tests := []struct {
		conds string
		want  []int64
	}{
		{"", []int64{1, 2, 4, 5}},
		{"created_time>1700000000", []int64{2, 4, 5}},
		{"created_time<1700000100", []int64{1}},
		{"created_time%3E1700000000&created_time%3C1700000200", []int64{2}},
		{"last_updated_time>1700000200", []int64{5}},
		{"last_updated_time<1700000201", []int64{1, 2, 4}},
		{"created_by=5", []int64{1, 4}},
		{"created_by=7", []int64{5}},
		{"created_by=99", []int64{}},
		{"last_updated_by=6", []int64{2, 5}},
		{"field_103=1", []int64{1, 4}},
		{"field_103=2", []int64{2, 5}},
		{"field_103=3", []int64{}},
		{"field_105=3", []int64{1, 2, 5}},
		{"field_105=2", []int64{4, 5}},
		{"field_105=1&field_105=2", []int64{5}},
		{"field_104=6", []int64{1}},
		{"field_104=7", []int64{5}},
		{"field_101=Print", []int64{4}},
		{"field_101=print", []int64{4}}, // Textbox search ignores case
		{"field_101=Report9", []int64{}},
		{"field_101=ReportX", []int64{5}},
		{"field_101=Export", []int64{}}, // equality, not a substring
		{"field_103=1&created_by=5&created_time>1700000100", []int64{4}},
		{"field_103=2&last_updated_by=6&field_105=3", []int64{2, 5}},
	}
	for _, tc := range tests {
		check(t, fmt.Sprintf("Search(re, %q)", tc.conds), search(t, st, acme, "re", tc.conds), tc.want)
	}

	ms, err := st.Search(ctx, acme, "re", nil)
	checkErr(t, "Search", err, nil)
	check(t, "summary of re 5", ms[3], core.Summary{Kind: "re", ID: 5, Title: "ReportX", Version: 2,
		CreatedTime: t3 + 100, LastUpdatedTime: t3 + 200, CreatedBy: 7, LastUpdatedBy: 6})
	check(t, "summary of re 1", ms[0], core.Summary{Kind: "re", ID: 1, Title: "Export to CSV", Version: 1,
		CreatedTime: t1, LastUpdatedTime: t1, CreatedBy: 5, LastUpdatedBy: 5})

	check(t, "Search(risk, field_402=2)", search(t, st, acme, "risk", "field_402=2"), []int64{3})
	check(t, "Search(risk, field_402=1)", search(t, st, acme, "risk", "field_402=1"), []int64{})
	check(t, "Search(bug) (a kind without records)", search(t, st, acme, "bug", ""), []int64{})
	check(t, "Search(other, re)", search(t, st, other, "re", ""), []int64{9})
	check(t, "Search(other, re, created_by=5)", search(t, st, other, "re", "created_by=5"), []int64{9})

	// A summary's title is "" when the title field is empty or the kind has none.
	create(t, st, acme, core.Record{Kind: "bug", CreatedBy: 5, CreatedTime: t1})
	ms, err = st.Search(ctx, acme, "bug", nil)
	checkErr(t, "Search(bug)", err, nil)
	check(t, "Search(bug) title", ms, []core.Summary{{Kind: "bug", ID: 1, Version: 1, CreatedTime: t1,
		LastUpdatedTime: t1, CreatedBy: 5, LastUpdatedBy: 5}})

	_, err = st.Search(ctx, acme, "nope", nil)
	checkErr(t, "Search of an unknown kind", err, core.ErrNotFound)
}

func testSearchDeleted(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 2, 5, t3+10, nil), nil)
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 4, 5, t3+20, nil), nil)
	tests := []struct {
		conds string
		want  []int64
	}{
		{"", []int64{1}},
		{"deleted_time>1000000000", []int64{2, 4}},
		{"deleted_time>1700000210", []int64{4}},
		{"deleted_time<1700000215", []int64{2}},
		{"deleted_time<1800000000", []int64{2, 4}}, // never a live record (deleted_time 0)
		{"deleted_time>1700000000&field_103=1", []int64{4}},
		{"deleted_time>1700000000&created_by=6", []int64{2}},
		{"field_103=1", []int64{1}},
		{"created_by=5", []int64{1}},
	}
	for _, tc := range tests {
		check(t, fmt.Sprintf("Search(re, %q)", tc.conds), search(t, st, acme, "re", tc.conds), tc.want)
	}
}

func relations(t *testing.T, st core.Store, account int64, kind string, id int64) []string {
	t.Helper()
	rs, err := st.Related(ctx, account, kind, id)
	if err != nil {
		t.Fatalf("Related(%s, %d): %v", kind, id, err)
	}
	out := []string{}
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %s-%d %q", r.Type, r.Kind, r.ID, r.Title))
	}
	return out
}

func testRelated(t *testing.T, st core.Store) {
	acme, other := provisioned(t, st)
	check(t, "Related(re 1) (by kind re, ft, uc, custom; then id)", relations(t, st, acme, "re", 1), []string{
		`Is Child Of re-2 "Import"`,
		`Is Related To re-4 "Print"`,
		`Is Parent Of ft-7 "CSV writer"`,
		`Is Related To uc-3 "Export"`,
		`Is Related To risk-3 "Late delivery"`,
	})
	check(t, "Related(ft 7)", relations(t, st, acme, "ft", 7), []string{`Is Child Of re-1 "Export to CSV"`})
	check(t, "Related(re 2)", relations(t, st, acme, "re", 2), []string{`Is Parent Of re-1 "Export to CSV"`})
	check(t, "Related(risk 3)", relations(t, st, acme, "risk", 3), []string{`Is Related To re-1 "Export to CSV"`})
	check(t, "Related(re 4)", relations(t, st, acme, "re", 4), []string{`Is Related To re-1 "Export to CSV"`})
	check(t, "Related(other re 9)", relations(t, st, other, "re", 9), []string{})

	rs, err := st.Related(ctx, acme, "ft", 7)
	checkErr(t, "Related", err, nil)
	check(t, "Related(ft 7) item", rs, []core.Relation{{Type: core.RelChildOf, Summary: core.Summary{Kind: "re",
		ID: 1, Title: "Export to CSV", Version: 1, CreatedTime: t1, LastUpdatedTime: t1, CreatedBy: 5,
		LastUpdatedBy: 5}}})

	// Deleted records are hidden from the lists, and cannot be asked about.
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 4, 5, t3, nil), nil)
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "uc", 3, 5, t3, nil), nil)
	check(t, "Related(re 1) after deletes", relations(t, st, acme, "re", 1), []string{
		`Is Child Of re-2 "Import"`,
		`Is Parent Of ft-7 "CSV writer"`,
		`Is Related To risk-3 "Late delivery"`,
	})
	for _, tc := range []struct {
		account int64
		kind    string
		id      int64
	}{{acme, "re", 4}, {acme, "re", 99}, {acme, "nope", 1}, {other, "re", 1}} {
		_, err := st.Related(ctx, tc.account, tc.kind, tc.id)
		checkErr(t, fmt.Sprintf("Related(%d, %s, %d)", tc.account, tc.kind, tc.id), err, core.ErrNotFound)
	}
	// Titles follow updates.
	update(t, st, acme, "ft", 7, core.Update{UserID: 5, Time: t3, Values: map[int64]string{ftTitle: "CSV writer 2"}})
	check(t, "Related(re 2) after an update", relations(t, st, acme, "ft", 7)[0], `Is Child Of re-1 "Export to CSV"`)
	check(t, "Related(re 1) after an update", relations(t, st, acme, "re", 1)[1], `Is Parent Of ft-7 "CSV writer 2"`)
}

// testSearchConditionForms checks condition spellings CheckConditions accepts: a field id with leading
// zeros, a percent-encoded operator, a picklist value with a sign or leading zeros.
func testSearchConditionForms(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	for _, tc := range []struct {
		conds string
		want  []int64
	}{
		{"field_0103=1", []int64{1, 4}},
		{"field_103%3D01", []int64{1, 4}},
		{"field_103=+2", []int64{2}},
		{"created_by=005", []int64{1, 4}},
	} {
		check(t, fmt.Sprintf("Search(re, %q)", tc.conds), search(t, st, acme, "re", tc.conds), tc.want)
	}
}

// testSearchWords: a Textbox search takes words of any script and ignores case as Unicode folds it, whether the
// value was indexed by a create or an update, and whether the word is written composed or decomposed.
func testSearchWords(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	id := func(title string) int64 {
		t.Helper()
		return create(t, st, acme, core.Record{Kind: "re", CreatedBy: 5, CreatedTime: t3 + 100,
			Values: map[int64]string{reTitle: title}}).ID
	}
	ete := id("Été")
	decomposed := id("e\u0301te\u0301") // été with combining accents
	strasse := id("Straße")
	city := id("東京")
	greek := id("ΟΔΟΣ")
	id("naïve café") // two words: no Textbox search finds it
	update(t, st, acme, "re", city, core.Update{UserID: 6, Time: t3 + 200, Values: map[int64]string{reTitle: "Москва"}})

	tests := []struct {
		conds string
		want  []int64
	}{
		{"field_101=été", []int64{ete, decomposed}},
		{"field_101=%C3%89T%C3%89", []int64{ete, decomposed}}, // ÉTÉ, percent-encoded
		{"field_101=e%CC%81te%CC%81", []int64{ete, decomposed}},
		{"field_101=straße", []int64{strasse}},
		{"field_101=STRASSE", []int64{strasse}},
		{"field_101=MOCKBA", []int64{}}, // Latin letters, not the Cyrillic ones
		{"field_101=москва", []int64{city}},
		{"field_101=東京", []int64{}}, // the old value of an update
		{"field_101=οδος", []int64{greek}},
		{"field_101=οδοσ", []int64{greek}},
		{"field_101=Print", []int64{4}},
		{"field_101=print", []int64{4}},
	}
	for _, tc := range tests {
		check(t, fmt.Sprintf("Search(re, %q)", tc.conds), search(t, st, acme, "re", tc.conds), tc.want)
	}
}
