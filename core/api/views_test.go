package api

import (
	"errors"
	"testing"

	"github.com/reqgate/reqgate/core"
)

func TestRenderViews(t *testing.T) {
	users := []core.User{{ID: 5, FirstName: "Alice", LastName: "Archer"}}
	views := []core.View{
		{ID: 12, Kind: "re", Name: "Pending review", Description: "Everything <new>", CreatedBy: 5},
		{ID: 13, Kind: "re", Name: "All", CreatedBy: 99},
	}
	want := xmlHeader + `<views>
<view>
<view_id>12</view_id>
<name>Pending review</name>
<description>Everything &lt;new&gt;</description>
<created_by_firstname>Alice</created_by_firstname>
<created_by_lastname>Archer</created_by_lastname>
</view>
<view>
<view_id>13</view_id>
<name>All</name>
<description />
<created_by_firstname />
<created_by_lastname />
</view>
</views>
`
	if got := string(renderViews(views, users)); got != want {
		t.Errorf("renderViews:\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestViewConditions(t *testing.T) {
	fields := []core.Field{{ID: 103, Type: core.TypePickOne, Options: []core.Option{{Value: 1}}}}
	tests := []struct {
		name, conds string
		want        int
		wantErr     bool
	}{
		{"empty", "", 0, false},
		{"picklist", "field_103=1", 1, false},
		{"two", "field_103=1&created_time>5", 2, false},
		{"unknown field", "field_999=1", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := viewConditions(core.View{ID: 1, Kind: "re", Conditions: tt.conds}, fields)
			if (err != nil) != tt.wantErr {
				t.Fatalf("viewConditions(%q) error = %v, want error %v", tt.conds, err, tt.wantErr)
			}
			if len(got) != tt.want {
				t.Errorf("viewConditions(%q) = %d conditions, want %d", tt.conds, len(got), tt.want)
			}
			var ve *core.ValidationError
			if err != nil && errors.As(err, &ve) {
				t.Errorf("a broken view must be a server fault, not a 400: %v", err)
			}
		})
	}
}
