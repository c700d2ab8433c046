package api

import (
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
