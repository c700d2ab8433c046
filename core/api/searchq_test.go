package api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
)

// TestV2SearchQ checks the q form of search conditions, the one a client generated from the OpenAPI document
// sends (each condition the value of a q parameter, percent-encoded as a form value): it finds what the raw
// form finds, mixes with it, and is refused, with the condition quoted, where the raw form would be.
func TestV2SearchQ(t *testing.T) {
	e := v2Setup(t)
	found := []struct{ name, query, want string }{
		{"time", "q=created_time%3E1700001000", "RE-3 RE-4"},
		{"time range", "q=created_time%3E1700000500&q=created_time%3C1700002500", "RE-2 RE-3"},
		{"operator sent raw", "q=created_time<1700001000", "RE-1"},
		{"picklist", "q=field_103%3D1", "RE-1 RE-3"},
		{"user", "q=created_by%3D5", "RE-1 RE-3"},
		{"textbox", "q=field_101%3DExport", "RE-1"},
		{"with raw conditions", "field_103=1&q=created_time%3E1700001000", "RE-3"},
		{"with name=value conditions", "created_by=5&q=created_time%3C1700001000", "RE-1"},
	}
	for _, tt := range found {
		t.Run(tt.name, func(t *testing.T) {
			e := e.with(t)
			if got := e.list("/re/search?"+tt.query, "search_results").ids(); got != tt.want {
				t.Errorf("search?%s = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
	if got, want := e.list("/re/view/13/search?q=created_by%3D5", "view").ids(), e.list("/re/view/13/search?created_by=5", "view").ids(); got != want {
		t.Errorf("view search with q = %q, raw = %q", got, want)
	}

	refused := []struct{ name, query, message string }{
		{"empty", "q=", "q=: a q parameter holds one condition"},
		{"greater or equal", "q=created_time%3E%3D1262493473", "created_time>=1262493473: the operator >= is not supported"},
		{"two conditions in one", "q=created_by%3D5%26field_103%3D1", "created_by=5&field_103=1: user id is not an integer"},
		{"decoded once only", "q=field_101%3DExport%2541", "field_101=Export%41: a Textbox search value is one word"},
		{"a q inside q", "q=q%3Dcreated_by%3D5", "unknown search attribute q"},
		{"no operator", "q=created_by", "created_by: not a condition"},
		{"unknown field", "q=field_999%3D1", "field_999=1: unknown field field_999"},
		{"view search takes no deleted_time", "q=deleted_time%3E1000000000", "a view lists live records only"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			e := e.with(t)
			path := "/re/search?" + tt.query
			if tt.name == "view search takes no deleted_time" {
				path = "/re/view/13/search?" + tt.query
			}
			var got struct {
				XMLName xml.Name
				Message string `xml:"message"`
			}
			decode(t, e.get(path, http.StatusBadRequest), &got)
			if got.XMLName.Local != "error" || !strings.Contains(got.Message, tt.message) {
				t.Errorf("GET %s: message %q, want one containing %q", path, got.Message, tt.message)
			}
		})
	}
}
