package api

import (
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
