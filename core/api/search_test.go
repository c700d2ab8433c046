package api

import (
	"testing"

	"github.com/reqgate/reqgate/core"
)

func TestRenderSummaries(t *testing.T) {
	sums := []core.Summary{
		{Kind: "re", ID: 1, Title: "Export <CSV>", Version: 2, CreatedTime: 1700000000, LastUpdatedTime: 1700000100, CreatedBy: 5, LastUpdatedBy: 6},
		{Kind: "risk", ID: 3, Version: 1, CreatedTime: 1, LastUpdatedTime: 1, CreatedBy: 5, LastUpdatedBy: 5},
	}
	want := xmlHeader + `<search_results>
<requirement>
<id>1</id>
<id_prefix>RE-</id_prefix>
<title>Export &lt;CSV&gt;</title>
<version_number>2</version_number>
<created_time unit="GMT Timestamp">1700000000</created_time>
<last_updated_time unit="GMT Timestamp">1700000100</last_updated_time>
<created_by>5</created_by>
<last_updated_by>6</last_updated_by>
</requirement>
<custom_object>
<id>3</id>
<id_prefix>CO-</id_prefix>
<title />
<version_number>1</version_number>
<created_time unit="GMT Timestamp">1</created_time>
<last_updated_time unit="GMT Timestamp">1</last_updated_time>
<created_by>5</created_by>
<last_updated_by>5</last_updated_by>
</custom_object>
</search_results>
`
	if got := string(renderSummaries("search_results", sums)); got != want {
		t.Errorf("renderSummaries:\ngot:\n%s\nwant:\n%s", got, want)
	}
	if got, want := string(renderSummaries("view", nil)), xmlHeader+"<view>\n</view>\n"; got != want {
		t.Errorf("renderSummaries(view, nil) = %q, want %q", got, want)
	}
}

func TestSummaryNames(t *testing.T) {
	tests := []struct{ kind, elem, prefix string }{
		{"re", "requirement", "RE-"},
		{"ft", "feature", "FT-"},
		{"uc", "use_case", "UC-"},
		{"risk", "custom_object", "CO-"},
	}
	for _, tt := range tests {
		if got, want := summaryElement(tt.kind), tt.elem; got != want {
			t.Errorf("summaryElement(%q) = %q, want %q", tt.kind, got, want)
		}
		if got, want := summaryPrefix(tt.kind), tt.prefix; got != want {
			t.Errorf("summaryPrefix(%q) = %q, want %q", tt.kind, got, want)
		}
	}
}
