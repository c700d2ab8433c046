package api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"slices"
	"strings"
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
		{"two", "field_103=1&created_time>1700000005", 2, false},
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

func TestV2ViewList(t *testing.T) {
	e := v2Setup(t)
	type xView struct {
		ID          int64  `xml:"view_id"`
		Name        string `xml:"name"`
		Description string `xml:"description"`
		First       string `xml:"created_by_firstname"`
		Last        string `xml:"created_by_lastname"`
	}
	tests := []struct {
		seg  string
		want []xView
	}{
		{"re", []xView{
			{12, "Pending review", "Everything not yet triaged", "Alice", "Archer"},
			{13, "All requirements", "", "Bob", "Baker"},
			{16, "Recent iOS", "", "Alice", "Archer"},
		}},
		{"ft", []xView{{14, "Open features", "", "Alice", "Archer"}}},
		{"risk", []xView{{15, "High risks", "", "Bob", "Baker"}}},
		{"uc", nil},
	}
	for _, tt := range tests {
		t.Run(tt.seg, func(t *testing.T) {
			e := e.with(t)
			var got struct {
				XMLName xml.Name
				Views   []xView `xml:"view"`
			}
			decode(t, e.get("/"+tt.seg+"/view", http.StatusOK), &got)
			if got.XMLName.Local != "views" {
				t.Errorf("root <%s>, want <views>", got.XMLName.Local)
			}
			if !slices.Equal(got.Views, tt.want) {
				t.Errorf("views = %+v, want %+v", got.Views, tt.want)
			}
		})
	}
	e.get("/nope/view", http.StatusNotFound)
}

func TestV2ViewContents(t *testing.T) {
	e := v2Setup(t)
	tests := []struct{ path, elem, want string }{
		{"/re/view/12", "requirement", "RE-1 RE-3"},
		{"/re/view/13", "requirement", "RE-1 RE-2 RE-3 RE-4"},
		{"/re/view/16", "requirement", "RE-2"}, // two conditions, one percent-encoded
		{"/ft/view/14", "feature", "FT-7"},
		{"/risk/view/15", "custom_object", "CO-3"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e := e.with(t)
			l := e.list(tt.path, "view")
			if got := l.ids(); got != tt.want {
				t.Errorf("GET %s = %q, want %q", tt.path, got, tt.want)
			}
			for _, it := range l.Items {
				if it.XMLName.Local != tt.elem {
					t.Errorf("item <%s>, want <%s>", it.XMLName.Local, tt.elem)
				}
			}
		})
	}
	// A summary carries the record's system fields.
	got := e.list("/re/view/12", "view").Items[0]
	want := xSummary{XMLName: xml.Name{Local: "requirement"}, ID: 1, IDPrefix: "RE-", Title: "Export", Version: 1,
		CreatedTime: xStamp{"GMT Timestamp", 1700000000}, LastUpdatedTime: xStamp{"GMT Timestamp", 1700000000},
		CreatedBy: 5, LastUpdatedBy: 5}
	if got != want {
		t.Errorf("summary = %+v, want %+v", got, want)
	}
	for _, p := range []string{
		"/re/view/14",   // a view of features
		"/ft/view/12",   // a view of requirements
		"/re/view/99",   // no such view
		"/re/view/20",   // the other account's view
		"/re/view/abc",  // not an id
		"/re/view/0",    // not an id
		"/nope/view/12", // no such kind
		"/re/view/99/search?created_by=5",
		"/ft/view/12/search?created_by=5",
	} {
		e.get(p, http.StatusNotFound)
	}
}

func TestV2ViewLiveMembership(t *testing.T) {
	e := v2Setup(t)
	steps := []struct {
		name   string
		change func() int64
		view12 string
		view13 string
	}{
		{"update into the view", func() int64 { return e.put("bob", "re", 2, "field_103", "1") }, "RE-1 RE-2 RE-3", "RE-1 RE-2 RE-3 RE-4"},
		{"update out of the view", func() int64 { return e.put("alice", "re", 1, "field_103", "3") }, "RE-2 RE-3", "RE-1 RE-2 RE-3 RE-4"},
		{"delete", func() int64 { return e.del("re", 3) }, "RE-2", "RE-1 RE-2 RE-4"},
	}
	for _, st := range steps {
		st.change()
		if got := e.list("/re/view/12", "view").ids(); got != st.view12 {
			t.Errorf("after %s: view 12 = %q, want %q", st.name, got, st.view12)
		}
		if got := e.list("/re/view/13", "view").ids(); got != st.view13 {
			t.Errorf("after %s: view 13 = %q, want %q", st.name, got, st.view13)
		}
	}
	// The moved record's summary shows the update.
	got := e.list("/re/view/12", "view").Items[0]
	if got.ID != 2 || got.Version != 2 || got.LastUpdatedBy != 6 || got.LastUpdatedTime.Value != v2Start+1 {
		t.Errorf("RE-2 after update = %+v, want version 2, last_updated_by 6, last_updated_time %d", got, v2Start+1)
	}
}

func TestV2ViewSearch(t *testing.T) {
	e := v2Setup(t)
	deleted := e.del("re", 4)
	tests := []struct{ query, want string }{
		{"/re/view/12/search?created_by=5", "RE-1 RE-3"},
		{"/re/view/12/search?created_by=6", ""},
		{"/re/view/13/search?field_105=2", "RE-1 RE-2"},
		{"/re/view/13/search?created_time%3E1700000500&created_time%3C1700002500", "RE-2 RE-3"},
		{"/re/view/13/search", "RE-1 RE-2 RE-3"},
		{"/re/view/16/search?created_by=6", "RE-2"},
		{"/re/view/16/search?created_by=5", ""},
		{"/risk/view/15/search?created_by=5", "CO-3"},
	}
	for _, tt := range tests {
		if got := e.list(tt.query, "view").ids(); got != tt.want {
			t.Errorf("GET %s = %q, want %q", tt.query, got, tt.want)
		}
	}
	for _, q := range []string{"/re/view/12/search?field_102=x", "/re/view/12/search?created_time>soon"} {
		e.get(q, http.StatusBadRequest)
	}
	// A view search narrows the view, which lists live records: a deleted_time condition, which would list the
	// deleted records of the kind instead, is refused; the kind's search finds them.
	for _, q := range []string{
		"/re/view/13/search?deleted_time>" + itoa64(deleted-1),
		"/re/view/12/search?deleted_time%3E" + itoa64(deleted-1),
		"/re/view/13/search?created_by=6&deleted_time<" + itoa64(deleted+1),
	} {
		msg := message(t, e.get(q, http.StatusBadRequest))
		if !strings.Contains(msg, "a view lists live records only, so a view search takes no deleted_time") {
			t.Errorf("GET %s: message %q does not say why", q, msg)
		}
	}
	if got := e.list("/re/search?deleted_time>"+itoa64(deleted-1), "search_results").ids(); got != "RE-4" {
		t.Errorf("the kind's search for deleted records = %q, want RE-4", got)
	}
}
