package translate

import (
	"encoding/json"
	"testing"
)

func TestWantsJSON(t *testing.T) {
	tests := []struct {
		name   string
		accept string
		want   bool
	}{
		{"empty", "", false},
		{"json", "application/json", true},
		{"json upper case", "Application/JSON", true},
		{"json with charset", "application/json; charset=utf-8", true},
		{"vendor json", "application/vnd.api+json", true},
		{"problem json", "application/problem+json", true},
		{"xml", "application/xml", false},
		{"text xml", "text/xml", false},
		{"anything", "*/*", false},
		{"json over wildcard", "application/json, */*;q=0.1", true},
		{"json named beats wildcard at equal q", "application/json, */*", true},
		{"browser default", "application/json, text/plain, */*", true},
		{"wildcard preferred over json", "application/json;q=0.5, */*", false},
		{"json ties xml", "application/json, application/xml", false},
		{"xml preferred", "application/json;q=0.5, application/xml", false},
		{"json preferred", "application/xml;q=0.5, application/json", true},
		{"json preferred over text xml", "text/xml;q=0.9, application/json;q=0.95", true},
		{"json excluded", "application/json;q=0", false},
		{"json excluded, xml wildcard", "application/json;q=0, */*", false},
		{"only json q", "application/json;q=0.001", true},
		{"xml excluded", "application/xml;q=0, application/json;q=0.2", true},
		{"application wildcard ranks below named json", "application/*, application/json", true},
		{"text wildcard", "text/*;q=0.3, application/json;q=0.4", true},
		{"xml suffix", "application/atom+xml, application/json;q=0.9", false},
		{"other types only", "text/html, image/png", false},
		{"spaces", "  application/json  ;  q=1.0  ,  text/xml ; q=0.8 ", true},
		{"bad q ignored", "application/json;q=2, application/xml;q=0.1", false},
		{"bad q text", "application/json;q=high", false},
		{"q too many decimals", "application/json;q=0.5555", false},
		{"other params", "application/json;version=2;q=0.7, application/xml;q=0.6", true},
		{"empty elements", ",,application/json,,", true},
		{"garbage", ";;;==,/,", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := WantsJSON([]byte(tt.accept)), tt.want; got != want {
				t.Errorf("WantsJSON(%q) = %v, want %v", tt.accept, got, want)
			}
		})
	}
}

func TestIsJSON(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{" APPLICATION/Json ;charset=UTF-8", true},
		{"application/merge-patch+json", true},
		{"application/xml", false},
		{"text/json", false},
		{"", false},
		{"application/jsonx", false},
	}
	for _, tt := range tests {
		if got, want := IsJSON([]byte(tt.ct)), tt.want; got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", tt.ct, got, want)
		}
	}
}

func TestErrorJSON(t *testing.T) {
	tests := []struct {
		message string
		want    string
	}{
		{"Not found", `{"error":{"message":"Not found"}}`},
		{`a "quoted" <tag> & \ back`, `{"error":{"message":"a \"quoted\" <tag> & \\ back"}}`},
		{"line\nbreak\x01", `{"error":{"message":"line\nbreak\u0001"}}`},
		{"bad \xff utf-8", `{"error":{"message":"bad ` + "\uFFFD" + ` utf-8"}}`},
		{"", `{"error":{"message":""}}`},
	}
	for _, tt := range tests {
		got := ErrorJSON(tt.message)
		if string(got) != tt.want {
			t.Errorf("ErrorJSON(%q) = %s, want %s", tt.message, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("ErrorJSON(%q) is not valid JSON: %s", tt.message, got)
		}
	}
	// The same as the translation of the XML error body.
	js, err := XMLToJSON([]byte("<error><message>Not found</message></error>"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(ErrorJSON("Not found")), string(js); got != want {
		t.Errorf("ErrorJSON = %s, XMLToJSON of the error body = %s", got, want)
	}
}
