package api

import (
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
