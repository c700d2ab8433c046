package api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
)

func TestRenderObjects(t *testing.T) {
	objs := []core.Object{
		{UniqueID: "4i8T", APIPrefix: "re", NameSingular: "Requirement", NamePlural: "Requirements", IDPrefix: "RE"},
		{UniqueID: "kJ0B", APIPrefix: "risk", NameSingular: "Risk", NamePlural: "Risks", Description: "R & D", IDPrefix: "RSK", Custom: true},
	}
	want := xmlHeader + `<objects>
<object>
<object_unique_id>4i8T</object_unique_id>
<api_prefix>re</api_prefix>
<name_singular>Requirement</name_singular>
<name_plural>Requirements</name_plural>
<description />
<id_prefix>RE</id_prefix>
<custom_object>No</custom_object>
<deploy_status>Deployed</deploy_status>
</object>
<object>
<object_unique_id>kJ0B</object_unique_id>
<api_prefix>risk</api_prefix>
<name_singular>Risk</name_singular>
<name_plural>Risks</name_plural>
<description>R &amp; D</description>
<id_prefix>RSK</id_prefix>
<custom_object>Yes</custom_object>
<deploy_status>Deployed</deploy_status>
</object>
</objects>
`
	if got := string(renderObjects(objs)); got != want {
		t.Errorf("renderObjects:\ngot:\n%s\nwant:\n%s", got, want)
	}
	if got, want := string(renderObjects(nil)), xmlHeader+"<objects>\n</objects>\n"; got != want {
		t.Errorf("renderObjects(nil) = %q, want %q", got, want)
	}
}

func TestV2Objects(t *testing.T) {
	e := v2Setup(t)
	type xObject struct {
		UniqueID     string `xml:"object_unique_id"`
		APIPrefix    string `xml:"api_prefix"`
		NameSingular string `xml:"name_singular"`
		NamePlural   string `xml:"name_plural"`
		Description  string `xml:"description"`
		IDPrefix     string `xml:"id_prefix"`
		Custom       string `xml:"custom_object"`
		Deploy       string `xml:"deploy_status"`
	}
	var got struct {
		XMLName xml.Name
		Objects []xObject `xml:"object"`
	}
	body := e.get("/object", http.StatusOK)
	decode(t, body, &got)
	if got.XMLName.Local != "objects" {
		t.Fatalf("root <%s>, want <objects>", got.XMLName.Local)
	}
	want := []xObject{
		{APIPrefix: "re", NameSingular: "Requirement", NamePlural: "Requirements", IDPrefix: "RE", Custom: "No", Deploy: "Deployed"},
		{APIPrefix: "ft", NameSingular: "Feature", NamePlural: "Features", IDPrefix: "FT", Custom: "No", Deploy: "Deployed"},
		{APIPrefix: "uc", NameSingular: "Use Case", NamePlural: "Use Cases", IDPrefix: "UC", Custom: "No", Deploy: "Deployed"},
		{APIPrefix: "risk", NameSingular: "Risk", NamePlural: "Risks", Description: "Project risks", IDPrefix: "RSK", Custom: "Yes", Deploy: "Deployed"},
	}
	if len(got.Objects) != len(want) {
		t.Fatalf("%d objects, want %d:\n%s", len(got.Objects), len(want), body)
	}
	seen := map[string]bool{}
	for i, o := range got.Objects {
		if o.UniqueID == "" || seen[o.UniqueID] || strings.Trim(o.UniqueID, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			t.Errorf("object %s: object_unique_id %q is not a unique URL-safe string", o.APIPrefix, o.UniqueID)
		}
		seen[o.UniqueID] = true
		o.UniqueID = ""
		if o != want[i] {
			t.Errorf("object %d = %+v, want %+v", i, o, want[i])
		}
	}
	// Stable: the same ids on every read, and nothing of another account.
	if again := e.get("/object", http.StatusOK); string(again) != string(body) {
		t.Errorf("second read differs:\n%s\nfirst:\n%s", again, body)
	}
	status, other := e.do(http.MethodGet, e.url+"/api2/other/object", "olga", "")
	if status != http.StatusOK || strings.Contains(string(other), "risk") {
		t.Errorf("other account: status %d, body:\n%s", status, other)
	}
}
