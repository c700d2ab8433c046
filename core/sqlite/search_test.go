package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/reqgate/reqgate/core"
)

// TestSearchPlans checks search results against the benchmark data computed in Go, for conditions matching
// fewer and more records than estimateCap (the two ways a field condition is run).
func TestSearchPlans(t *testing.T) {
	ctx := context.Background()
	const n = 6000
	s, err := Open(ctx, filepath.Join(t.TempDir(), "core.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Apply(ctx, benchProvision()); err != nil {
		t.Fatal(err)
	}
	a, err := s.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	bulkLoad(t, s, a.ID, n)
	for _, id := range []int64{10, 20, 4000} {
		if err := s.DeleteRecord(ctx, a.ID, "re", id, 1000, 5, nil); err != nil {
			t.Fatal(err)
		}
	}
	fields, err := s.Fields(ctx, a.ID, "re")
	if err != nil {
		t.Fatal(err)
	}
	has := func(multi string, v string) bool { return slices.Contains(core.SplitIDs(multi), int64(v[0]-'0')) }
	tests := []struct {
		conds string
		match func(r core.Record) bool
	}{
		{"field_103=2", func(r core.Record) bool { return r.Values[103] == "2" }},
		{"field_107=42", func(r core.Record) bool { return r.Values[107] == "42" }},
		{"field_103=2&field_105=3", func(r core.Record) bool { return r.Values[103] == "2" && has(r.Values[105], "3") }},
		{"field_105=1&field_107=7", func(r core.Record) bool { return r.Values[107] == "7" && has(r.Values[105], "1") }},
		{"field_103=1&created_by=1042", func(r core.Record) bool { return r.Values[103] == "1" && r.CreatedBy == 1042 }},
		{"field_107=5&created_time>1600003000", func(r core.Record) bool {
			return r.Values[107] == "5" && r.CreatedTime > 1600003000
		}},
		{"field_105=2&created_time>1600001000&created_time<1600002000", func(r core.Record) bool {
			return has(r.Values[105], "2") && r.CreatedTime > 1600001000 && r.CreatedTime < 1600002000
		}},
		{"field_101=rec4242", func(r core.Record) bool { return r.ID == 4242 }},
	}
	for _, tc := range tests {
		t.Run(tc.conds, func(t *testing.T) {
			conds, err := core.ParseConditions(tc.conds)
			if err != nil {
				t.Fatal(err)
			}
			if err := core.CheckConditions(conds, fields); err != nil {
				t.Fatal(err)
			}
			ms, err := s.Search(ctx, a.ID, "re", conds)
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			got := []int64{}
			for _, m := range ms {
				got = append(got, m.ID)
				if want := "Rec" + strconv.FormatInt(m.ID, 10); m.Title != want {
					t.Errorf("record %d: title %q, want %q", m.ID, m.Title, want)
				}
			}
			want := []int64{}
			for i := 1; i <= n; i++ {
				r := benchRecord(i)
				if tc.match(r) && i != 10 && i != 20 && i != 4000 {
					want = append(want, int64(i))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %d records %s, want %d %s", len(got), head(got), len(want), head(want))
			}
		})
	}
}

func head(ids []int64) string {
	if len(ids) > 8 {
		return fmt.Sprint(ids[:8], "...")
	}
	return fmt.Sprint(ids)
}
