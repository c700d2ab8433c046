package api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
)

func TestHistoryValue(t *testing.T) {
	users := map[int64]core.User{5: {ID: 5, Email: "alice@acme.test", FirstName: "Alice", LastName: "Archer"}}
	opts := []core.Option{{Value: 1, Label: "Web"}, {Value: 2, Label: "iOS & more"}}
	tests := []struct {
		name  string
		field core.Field
		value string
		want  string
	}{
		{"empty", core.Field{Type: core.TypeTextbox}, "", "<v />\n"},
		{"empty checkbox", core.Field{Type: core.TypeCheckbox}, "", "<v />\n"},
		{"textbox", core.Field{Type: core.TypeTextbox}, "a<b", "<v>a&lt;b</v>\n"},
		{"text", core.Field{Type: core.TypeText}, "plain", "<v>plain</v>\n"},
		{"email", core.Field{Type: core.TypeEmail}, "a@b.c", "<v>a@b.c</v>\n"},
		{"url", core.Field{Type: core.TypeURL}, "http://x/?a=1&b=2", "<v>http://x/?a=1&amp;b=2</v>\n"},
		{"number", core.Field{Type: core.TypeNumber}, "1.5", "<v>1.5</v>\n"},
		{"integer", core.Field{Type: core.TypeInteger}, "42", "<v>42</v>\n"},
		{"textarea", core.Field{Type: core.TypeTextarea}, "<b>Hi</b>", "<v><![CDATA[<b>Hi</b>]]></v>\n"},
		{"pick one", core.Field{Type: core.TypePickOne, ListType: core.ListNormal, Options: opts}, "2", `<v id="2">iOS &amp; more</v>` + "\n"},
		{"pick one gone option", core.Field{Type: core.TypePickOne, Options: opts}, "9", `<v id="9"></v>` + "\n"},
		{"pick one user", core.Field{Type: core.TypePickOne, ListType: core.ListUser}, "5", `<v id="5" email="alice@acme.test">Alice Archer</v>` + "\n"},
		{"pick multiple", core.Field{Type: core.TypePickMultiple, ListType: core.ListNormal, Options: opts}, "1,2",
			"<v>\n" + `<value id="1">Web</value>` + "\n" + `<value id="2">iOS &amp; more</value>` + "\n</v>\n"},
		{"pick multiple user", core.Field{Type: core.TypePickMultiple, ListType: core.ListUser}, "5",
			"<v>\n" + `<value id="5" email="alice@acme.test">Alice Archer</value>` + "\n</v>\n"},
		{"date", core.Field{Type: core.TypeDate}, "2026-03-07",
			"<v>\n<year>2026</year>\n<month>03</month>\n<date>07</date>\n<timezone>GMT</timezone>\n</v>\n"},
		{"checked", core.Field{Type: core.TypeCheckbox}, "1", `<v value="1">Checked</v>` + "\n"},
		{"unchecked", core.Field{Type: core.TypeCheckbox}, "0", `<v value="0">Unchecked</v>` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var x xmlw
			x.historyValue("v", tt.field, tt.value, users)
			if got, want := string(x.b), tt.want; got != want {
				t.Errorf("historyValue(%s, %q) = %q, want %q", tt.field.Type, tt.value, got, want)
			}
		})
	}
}

func TestRenderHistory(t *testing.T) {
	f := core.Field{ID: 103, Type: core.TypePickOne, Options: []core.Option{{Value: 1, Label: "Pending Review"}, {Value: 2, Label: "Accepted - Scheduled"}}}
	changes := []core.Change{
		{FieldID: 103, UserID: 5, Time: 1700000000, Old: "", New: "1"},
		{FieldID: 103, UserID: 6, Time: 1700000100, Old: "1", New: "2"},
	}
	want := xmlHeader + `<history_items>
<history>
<user_id>5</user_id>
<action>Modified</action>
<old_value />
<new_value id="1">Pending Review</new_value>
<activity_time unit="GMT Timestamp">1700000000</activity_time>
</history>
<history>
<user_id>6</user_id>
<action>Modified</action>
<old_value id="1">Pending Review</old_value>
<new_value id="2">Accepted - Scheduled</new_value>
<activity_time unit="GMT Timestamp">1700000100</activity_time>
</history>
</history_items>
`
	if got := string(renderHistory(f, changes, nil)); got != want {
		t.Errorf("renderHistory:\ngot:\n%s\nwant:\n%s", got, want)
	}
	if got, want := string(renderHistory(f, nil, nil)), xmlHeader+"<history_items>\n</history_items>\n"; got != want {
		t.Errorf("renderHistory(no changes) = %q, want %q", got, want)
	}
}

// xHistoryValue is an old_value or new_value as read back.
type xHistoryValue struct {
	ID       *string `xml:"id,attr"`
	Email    *string `xml:"email,attr"`
	Value    *string `xml:"value,attr"`
	Text     string  `xml:",chardata"`
	Year     string  `xml:"year"`
	Month    string  `xml:"month"`
	Date     string  `xml:"date"`
	Timezone string  `xml:"timezone"`
	Values   []struct {
		ID    string `xml:"id,attr"`
		Email string `xml:"email,attr"`
		Text  string `xml:",chardata"`
	} `xml:"value"`
}

// String writes the value compactly: [id=..][email=..][value=..]text, {id:email:text ...} for multiple
// picklists, YYYY/MM/DD TZ for dates.
func (v xHistoryValue) String() string {
	var b strings.Builder
	if v.Year != "" {
		return v.Year + "/" + v.Month + "/" + v.Date + " " + v.Timezone
	}
	for _, a := range []struct {
		name string
		v    *string
	}{{"id", v.ID}, {"email", v.Email}, {"value", v.Value}} {
		if a.v != nil {
			b.WriteString("[" + a.name + "=" + *a.v + "]")
		}
	}
	if len(v.Values) > 0 {
		b.WriteString("{")
		for i, x := range v.Values {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(x.ID + ":" + x.Email + ":" + x.Text)
		}
		b.WriteString("}")
		return b.String()
	}
	b.WriteString(strings.TrimSpace(v.Text))
	return b.String()
}

type xHistory struct {
	XMLName xml.Name
	Items   []struct {
		UserID int64         `xml:"user_id"`
		Action string        `xml:"action"`
		Old    xHistoryValue `xml:"old_value"`
		New    xHistoryValue `xml:"new_value"`
		Time   xStamp        `xml:"activity_time"`
	} `xml:"history"`
}

func TestV2FieldHistory(t *testing.T) {
	e := v2Setup(t)
	type change struct {
		user, value string
		old, new    string // expected shapes (xHistoryValue.String)
	}
	tests := []struct {
		name    string
		field   string
		changes []change
	}{
		{"Textbox", "101", []change{{"alice", "Export all", "Export", "Export all"}}},
		{"Textarea", "102", []change{
			{"bob", "<![CDATA[<b>Export</b> the list]]>", "", "<b>Export</b> the list"},
			{"alice", "plain", "<b>Export</b> the list", "plain"},
		}},
		{"Picklist", "103", []change{
			{"alice", "2", "[id=1]Pending Review", "[id=2]Accepted - Scheduled"},
			{"bob", "3", "[id=2]Accepted - Scheduled", "[id=3]Accepted - Unscheduled"},
		}},
		{"user Picklist", "104", []change{
			{"alice", "5", "", "[id=5][email=alice@acme.test]Alice Archer"},
			{"alice", "6", "[id=5][email=alice@acme.test]Alice Archer", "[id=6][email=bob@acme.test]Bob Baker"},
		}},
		{"multiple Picklist", "105", []change{{"alice", "3,1", "{1::Web 2::iOS}", "{1::Web 3::Android}"}}},
		{"multiple user Picklist", "113", []change{{"bob", "6,5", "", "{5:alice@acme.test:Alice Archer 6:bob@acme.test:Bob Baker}"}}},
		{"Text", "106", []change{{"alice", "some &amp; notes", "", "some & notes"}}},
		{"Email", "107", []change{{"alice", "c@acme.test", "", "c@acme.test"}}},
		{"URL", "108", []change{{"alice", "https://acme.test/a?b=1&amp;c=2", "", "https://acme.test/a?b=1&c=2"}}},
		{"Number", "109", []change{{"alice", "2.5", "", "2.5"}}},
		{"Number-Integer", "112", []change{{"alice", "8", "", "8"}, {"bob", "13", "8", "13"}}},
		{"Date", "110", []change{{"alice", "2026-03-07", "", "2026/03/07 GMT"}, {"alice", "2026-12-31", "2026/03/07 GMT", "2026/12/31 GMT"}}},
		{"Checkbox", "111", []change{{"alice", "1", "", "[value=1]Checked"}, {"bob", "0", "[value=1]Checked", "[value=0]Unchecked"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.with(t)
			var times []int64
			for _, c := range tt.changes {
				times = append(times, e.put(c.user, "re", 1, "field_"+tt.field, c.value))
			}
			var got xHistory
			body := e.get("/re/1/fieldhistory/"+tt.field, http.StatusOK)
			decode(t, body, &got)
			if got.XMLName.Local != "history_items" {
				t.Errorf("root <%s>, want <history_items>", got.XMLName.Local)
			}
			if len(got.Items) != len(tt.changes) {
				t.Fatalf("%d history items, want %d:\n%s", len(got.Items), len(tt.changes), body)
			}
			for i, c := range tt.changes {
				h := got.Items[i]
				wantUser := int64(5)
				if c.user == "bob" {
					wantUser = 6
				}
				if h.UserID != wantUser || h.Action != "Modified" || h.Time != (xStamp{"GMT Timestamp", times[i]}) {
					t.Errorf("item %d: user_id %d action %q activity_time %+v, want %d Modified %d",
						i, h.UserID, h.Action, h.Time, wantUser, times[i])
				}
				if got, want := h.Old.String(), c.old; got != want {
					t.Errorf("item %d: old_value %q, want %q", i, got, want)
				}
				if got, want := h.New.String(), c.new; got != want {
					t.Errorf("item %d: new_value %q, want %q", i, got, want)
				}
			}
			if tt.field == "102" && !strings.Contains(string(body), "<new_value><![CDATA[<b>Export</b> the list]]></new_value>") {
				t.Errorf("Textarea values must be CDATA:\n%s", body)
			}
			if tt.field == "104" && !strings.Contains(string(body), "<old_value />") {
				t.Errorf("an empty value must be an empty element:\n%s", body)
			}
		})
	}
}

func TestV2FieldHistoryEmptyAndMissing(t *testing.T) {
	e := v2Setup(t)
	e.put("alice", "re", 1, "field_103", "2") // history on RE-1 only
	tests := []struct {
		path   string
		status int
	}{
		{"/re/1/fieldhistory/101", http.StatusOK},        // a field without changes
		{"/re/3/fieldhistory/103", http.StatusOK},        // a record without changes
		{"/risk/3/fieldhistory/302", http.StatusOK},      // a custom object's field
		{"/re/99/fieldhistory/103", http.StatusNotFound}, // no such record
		{"/re/1/fieldhistory/999", http.StatusNotFound},  // no such field
		{"/re/1/fieldhistory/201", http.StatusNotFound},  // a field of features
		{"/re/1/fieldhistory/901", http.StatusNotFound},  // the other account's field
		{"/re/1/fieldhistory/abc", http.StatusNotFound},
		{"/re/abc/fieldhistory/103", http.StatusNotFound},
		{"/nope/1/fieldhistory/103", http.StatusNotFound},
	}
	for _, tt := range tests {
		body := e.get(tt.path, tt.status)
		if tt.status == http.StatusOK && !strings.HasSuffix(string(body), "<history_items>\n</history_items>\n") {
			t.Errorf("GET %s: want an empty <history_items>, got:\n%s", tt.path, body)
		}
	}
	e.del("re", 1)
	e.get("/re/1/fieldhistory/103", http.StatusNotFound)
}

// FuzzRenderHistory checks that any stored value, of any field type, renders as well-formed XML.
func FuzzRenderHistory(f *testing.F) {
	types := []core.FieldType{core.TypeInteger, core.TypeTextbox, core.TypeTextarea, core.TypePickOne,
		core.TypePickMultiple, core.TypeText, core.TypeEmail, core.TypeURL, core.TypeNumber, core.TypeDate,
		core.TypeCheckbox}
	for _, s := range []string{"", "1", "1,2", "2026-03-07", "<b>x</b>", "]]>", "\x00\xff", "a-b-c", "--"} {
		f.Add(uint8(0), false, s, s)
	}
	users := []core.User{{ID: 1, Email: "a&b@x", FirstName: "<A>"}}
	f.Fuzz(func(t *testing.T, typ uint8, user bool, old, new string) {
		fl := core.Field{ID: 1, Type: types[int(typ)%len(types)], Options: []core.Option{{Value: 1, Label: "]]>&<"}}}
		if user {
			fl.ListType = core.ListUser
		}
		body := renderHistory(fl, []core.Change{{FieldID: 1, UserID: 1, Time: 1, Old: old, New: new}}, users)
		var got xHistory
		if err := xml.Unmarshal(body, &got); err != nil || len(got.Items) != 1 {
			t.Fatalf("%s %q -> %q: not one well-formed history item (%v):\n%s", fl.Type, old, new, err, body)
		}
	})
}
