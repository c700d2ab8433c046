package core_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
)

func TestAssignUserIDs(t *testing.T) {
	spec := func(id int64, name string) core.UserSpec {
		return core.UserSpec{User: core.User{ID: id, Username: name}}
	}
	tests := []struct {
		name    string
		stored  map[int64]string
		specs   []core.UserSpec
		upserts string // "name=id ..." in call order
		err     string // part of the refusal, "" when accepted
	}{
		{"empty store", nil, []core.UserSpec{spec(0, "a"), spec(0, "b")}, "a=1 b=2", ""},
		{"ids first, then max+1 in file order", nil,
			[]core.UserSpec{spec(0, "new"), spec(7, "seven"), spec(3, "three")}, "seven=7 three=3 new=8", ""},
		{"a stored user keeps its id", map[int64]string{4: "old", 9: "other"},
			[]core.UserSpec{spec(0, "old"), spec(0, "fresh")}, "old=4 fresh=10", ""},
		{"a user may move to a free id", map[int64]string{4: "old"}, []core.UserSpec{spec(5, "old"), spec(0, "n")},
			"old=5 n=6", ""},
		{"an id another user holds", map[int64]string{4: "old"}, []core.UserSpec{spec(4, "new")}, "", "id 4 belongs to old"},
		{"two users of the file on one id", nil, []core.UserSpec{spec(2, "a"), spec(2, "b")}, "a=2", "id 2 belongs to a"},
		{"negative id", nil, []core.UserSpec{spec(-1, "a")}, "", "id must be positive"},
		{"no username", nil, []core.UserSpec{spec(0, "")}, "", "no username"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			ids, err := core.AssignUserIDs(tt.stored, tt.specs, func(u core.User, id int64) error {
				calls = append(calls, fmt.Sprintf("%s=%d", u.Username, id))
				return nil
			})
			if got := strings.Join(calls, " "); got != tt.upserts {
				t.Errorf("upserts %q, want %q", got, tt.upserts)
			}
			if tt.err != "" {
				var ve *core.ValidationError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want a ValidationError with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range calls {
				name, id, _ := strings.Cut(c, "=")
				if fmt.Sprint(ids[name]) != id {
					t.Errorf("result %s=%d, upserted as %s", name, ids[name], id)
				}
			}
			for id, name := range tt.stored {
				if _, ok := ids[name]; !ok {
					t.Errorf("stored user %s (%d) missing from the result %v", name, id, slices.Sorted(maps.Keys(ids)))
				}
			}
		})
	}
	boom := errors.New("boom")
	if _, err := core.AssignUserIDs(nil, []core.UserSpec{spec(0, "a")}, func(core.User, int64) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("upsert error %v, want it returned", err)
	}
}
