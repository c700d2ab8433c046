package api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
)

func TestRenderRelated(t *testing.T) {
	sum := func(kind string, id int64) core.Summary {
		return core.Summary{Kind: kind, ID: id, Title: "T", Version: 1, CreatedTime: 10, LastUpdatedTime: 20, CreatedBy: 5, LastUpdatedBy: 6}
	}
	rels := []core.Relation{
		{Type: core.RelChildOf, Summary: sum("re", 2)},
		{Type: core.RelParentOf, Summary: sum("uc", 4)},
		{Type: core.RelRelatedTo, Summary: sum("risk", 3)},
	}
	want := xmlHeader + `<relationships id_prefix="FT" id="7">
<requirements>
<requirement>
<relationship_type>Is Child Of</relationship_type>
<id>2</id>
<id_prefix>RE-</id_prefix>
<title>T</title>
<version_number>1</version_number>
<created_time unit="GMT Timestamp">10</created_time>
<last_updated_time unit="GMT Timestamp">20</last_updated_time>
<created_by>5</created_by>
<last_updated_by>6</last_updated_by>
</requirement>
</requirements>
<use_cases>
<use_case>
<relationship_type>Is Parent Of</relationship_type>
<id>4</id>
<id_prefix>UC-</id_prefix>
<title>T</title>
<version_number>1</version_number>
<created_time unit="GMT Timestamp">10</created_time>
<last_updated_time unit="GMT Timestamp">20</last_updated_time>
<created_by>5</created_by>
<last_updated_by>6</last_updated_by>
</use_case>
</use_cases>
<custom_objects>
<custom_object>
<relationship_type>Is Related To</relationship_type>
<id>3</id>
<id_prefix>CO-</id_prefix>
<title>T</title>
<version_number>1</version_number>
<created_time unit="GMT Timestamp">10</created_time>
<last_updated_time unit="GMT Timestamp">20</last_updated_time>
<created_by>5</created_by>
<last_updated_by>6</last_updated_by>
</custom_object>
</custom_objects>
</relationships>
`
	if got := string(renderRelated("ft", 7, rels)); got != want {
		t.Errorf("renderRelated:\ngot:\n%s\nwant:\n%s", got, want)
	}
	tests := []struct {
		kind string
		want string
	}{
		{"re", `<relationships id_prefix="RE" id="55">` + "\n</relationships>\n"},
		{"risk", `<relationships id_prefix="CO" id="55">` + "\n</relationships>\n"},
	}
	for _, tt := range tests {
		if got := string(renderRelated(tt.kind, 55, nil)); !strings.HasSuffix(got, tt.want) {
			t.Errorf("renderRelated(%q, 55, nil) = %q, want suffix %q", tt.kind, got, tt.want)
		}
	}
}

// xRelated is a related-items response as read back.
type xRelated struct {
	XMLName  xml.Name
	IDPrefix string `xml:"id_prefix,attr"`
	ID       string `xml:"id,attr"`
	Groups   []struct {
		XMLName xml.Name
		Items   []xSummary `xml:",any"`
	} `xml:",any"`
}

// String writes the groups as "group: <elem>PREFIX-id type; ...", in document order.
func (r xRelated) String() string {
	var b strings.Builder
	for _, g := range r.Groups {
		b.WriteString(g.XMLName.Local + ":")
		for _, it := range g.Items {
			b.WriteString(" <" + it.XMLName.Local + ">" + it.IDPrefix + itoa64(it.ID) + " " + it.RelType + ";")
		}
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String())
}

func TestV2Related(t *testing.T) {
	e := v2Setup(t)
	tests := []struct {
		path, prefix, id, want string
	}{
		{"/re/1/related", "RE", "1", "requirements: <requirement>RE-2 Is Related To; <requirement>RE-4 Is Parent Of; " +
			"features: <feature>FT-7 Is Parent Of; use_cases: <use_case>UC-9 Is Child Of; " +
			"custom_objects: <custom_object>CO-3 Is Related To;"},
		{"/ft/7/related", "FT", "7", "requirements: <requirement>RE-1 Is Child Of;"},
		{"/uc/9/related", "UC", "9", "requirements: <requirement>RE-1 Is Parent Of;"},
		{"/re/2/related", "RE", "2", "requirements: <requirement>RE-1 Is Related To;"},
		{"/risk/3/related", "CO", "3", "requirements: <requirement>RE-1 Is Related To;"},
		{"/re/3/related", "RE", "3", ""},
		{"/risk/4/related", "CO", "4", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e := e.with(t)
			body := e.get(tt.path, http.StatusOK)
			var got xRelated
			decode(t, body, &got)
			if got.XMLName.Local != "relationships" || got.IDPrefix != tt.prefix || got.ID != tt.id {
				t.Errorf("root <%s id_prefix=%q id=%q>, want <relationships id_prefix=%q id=%q>",
					got.XMLName.Local, got.IDPrefix, got.ID, tt.prefix, tt.id)
			}
			if s := got.String(); s != tt.want {
				t.Errorf("GET %s:\n got %s\nwant %s", tt.path, s, tt.want)
			}
		})
	}
	// Items are full summaries.
	var rel xRelated
	decode(t, e.get("/ft/7/related", http.StatusOK), &rel)
	want := xSummary{XMLName: xml.Name{Local: "requirement"}, RelType: "Is Child Of", ID: 1, IDPrefix: "RE-", Title: "Export",
		Version: 1, CreatedTime: xStamp{"GMT Timestamp", 1700000000}, LastUpdatedTime: xStamp{"GMT Timestamp", 1700000000},
		CreatedBy: 5, LastUpdatedBy: 5}
	if got := rel.Groups[0].Items[0]; got != want {
		t.Errorf("item = %+v, want %+v", got, want)
	}
	for _, p := range []string{"/re/99/related", "/re/abc/related", "/re/0/related", "/nope/1/related", "/ft/1/related"} {
		e.get(p, http.StatusNotFound)
	}
}

func TestV2RelatedDeleted(t *testing.T) {
	e := v2Setup(t)
	e.del("re", 4)
	e.del("uc", 9)
	var got xRelated
	decode(t, e.get("/re/1/related", http.StatusOK), &got)
	want := "requirements: <requirement>RE-2 Is Related To; features: <feature>FT-7 Is Parent Of; " +
		"custom_objects: <custom_object>CO-3 Is Related To;"
	if s := got.String(); s != want {
		t.Errorf("after deletes:\n got %s\nwant %s", s, want)
	}
	e.get("/re/4/related", http.StatusNotFound)
	e.del("re", 1)
	e.get("/re/1/related", http.StatusNotFound)
	body := e.get("/ft/7/related", http.StatusOK)
	if !strings.HasSuffix(string(body), `<relationships id_prefix="FT" id="7">`+"\n</relationships>\n") {
		t.Errorf("FT-7 after its parent was deleted: want an empty <relationships>, got:\n%s", body)
	}
}
