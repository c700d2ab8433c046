package accounts

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
	"golang.org/x/crypto/bcrypt"
)

func mustParse(t testing.TB, name, doc string) *core.Provision {
	t.Helper()
	p, err := Parse(name, []byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return p
}

func ids(fs []core.Field) []int64 {
	out := make([]int64, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func TestContractExample(t *testing.T) {
	data, err := os.ReadFile("testdata/contract.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("contract.yaml", data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := len(p.Accounts), 1; got != want {
		t.Fatalf("accounts = %d, want %d", got, want)
	}
	a := p.Accounts[0]
	if got, want := a.APIKey+"/"+a.Name, "acme-7f3a/Acme Corp"; got != want {
		t.Errorf("account = %q, want %q", got, want)
	}
	if got, want := len(a.Users), 2; got != want {
		t.Fatalf("users = %d, want %d", got, want)
	}
	alice, bob := a.Users[0], a.Users[1]
	if alice.ID != 5 || bob.ID != 0 || alice.Status != "Active" || bob.Email != "bob@acme.test" {
		t.Errorf("users = %+v, %+v", alice.User, bob.User)
	}
	if err := bcrypt.CompareHashAndPassword(alice.PasswordHash, []byte("alice-secret")); err != nil {
		t.Errorf("alice's hash does not match her password: %v", err)
	}
	if got, want := ids(a.Fields["re"]), []int64{101, 102, 103, 104, 105}; !slices.Equal(got, want) {
		t.Errorf("re field ids = %v, want %v", got, want)
	}
	// ft keeps its own template block; uc's block 301-306 collides with the custom object's 301/302.
	if got, want := ids(a.Fields["ft"]), []int64{201, 202, 203, 204, 205, 206}; !slices.Equal(got, want) {
		t.Errorf("ft field ids = %v, want %v", got, want)
	}
	if got, want := ids(a.Fields["uc"]), []int64{401, 402, 403, 404, 405, 406}; !slices.Equal(got, want) {
		t.Errorf("uc field ids = %v, want %v", got, want)
	}
	re := a.Fields["re"]
	if got, want := re[0].MaxSize, 255; got != want {
		t.Errorf("Title max_size = %d, want %d", got, want)
	}
	if got, want := re[1].MaxSize, 30000; got != want {
		t.Errorf("Description max_size = %d, want %d", got, want)
	}
	if got, want := re[3].ListType, core.ListUser; got != want {
		t.Errorf("Owner list_type = %q, want %q", got, want)
	}
	if got, want := re[2].Options[0], (core.Option{Value: 1, Label: "Pending Review", Sort: 1, Default: true}); got != want {
		t.Errorf("Status option 1 = %+v, want %+v", got, want)
	}
	if got, want := len(a.Objects), 1; got != want {
		t.Fatalf("objects = %d, want %d", got, want)
	}
	risk := a.Objects[0]
	if risk.APIPrefix != "risk" || risk.IDPrefix != "RSK" || !risk.Custom || risk.UniqueID == "" || len(risk.Fields) != 2 {
		t.Errorf("risk = %+v", risk)
	}
	if got, want := a.Views, []core.ViewSpec{{View: core.View{ID: 12, Kind: "re", Name: "Pending review",
		Description: "Everything not yet triaged", Conditions: "field_103=1"}, CreatedByUsername: "alice"}}; !slices.Equal(got, want) {
		t.Errorf("views = %+v, want %+v", got, want)
	}
	if got, want := len(a.Records), 2; got != want {
		t.Fatalf("records = %d, want %d", got, want)
	}
	r1 := a.Records[0]
	if r1.Kind != "re" || r1.ID != 1 || r1.CreatedByUsername != "alice" || r1.CreatedTime != 1700000000 ||
		r1.Values[101] != "Export to CSV" || r1.Values[102] != "<b>Export</b> the list" || r1.Values[103] != "1" {
		t.Errorf("record 1 = %+v", r1)
	}
	if got, want := a.Relationships, []core.RelationshipSpec{
		{FromKind: "re", FromID: 1, ToKind: "ft", ToID: 7, Type: "parent"},
		{FromKind: "re", FromID: 1, ToKind: "risk", ToID: 3, Type: "related"},
	}; !slices.Equal(got, want) {
		t.Errorf("relationships = %+v, want %+v", got, want)
	}
}

func TestTemplateBlocks(t *testing.T) {
	tests := []struct {
		name         string
		objectIDs    string // ids of the custom object's fields
		re, ft, uc   int64  // first id of each kind's template
		explicitKind string // a kind given explicitly (its template is not used)
	}{
		{"no collision", "[1, 2]", 101, 201, 301, ""},
		{"re collides", "[106]", 401, 201, 301, ""},
		{"re and ft collide", "[101, 203]", 401, 501, 301, ""},
		{"ft collides with 401 taken", "[205, 401]", 101, 501, 301, ""},
		{"every block collides", "[101, 201, 301]", 401, 501, 601, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields string
			for i, id := range SplitIDsForTest(tt.objectIDs) {
				fields += "          - {id: " + itoa(id) + ", label: F" + itoa(int64(i)) + ", type: Text}\n"
			}
			doc := head + "    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n" + fields
			a := mustParse(t, "blocks.yaml", doc).Accounts[0]
			for _, k := range []struct {
				kind  string
				first int64
			}{{"re", tt.re}, {"ft", tt.ft}, {"uc", tt.uc}} {
				var want []int64
				for i := range int64(6) {
					want = append(want, k.first+i)
				}
				if got := ids(a.Fields[k.kind]); !slices.Equal(got, want) {
					t.Errorf("%s ids = %v, want %v", k.kind, got, want)
				}
			}
		})
	}
}

// SplitIDsForTest reads "[1, 2]".
func SplitIDsForTest(s string) []int64 { return core.SplitIDs(s[1 : len(s)-1]) }

func TestSeedValues(t *testing.T) {
	doc := head + `    custom_objects:
      - api_prefix: thing
        name_singular: Thing
        id_prefix: TH
        fields:
          - {id: 1, label: Title, type: Textbox, special_purpose: title}
          - {id: 2, label: Due, type: date}
          - {id: 3, label: Done, type: Checkbox}
          - {id: 4, label: Count, type: Number-Integer}
          - {id: 5, label: Ratio, type: Number}
          - {id: 6, label: People, type: Picklist-Pick Multiple, list_type: user}
          - {id: 7, label: Owner, type: Picklist-Pick One, list_type: user}
          - {id: 8, label: Colours, type: Picklist-Pick Multiple, options: [{value: 1, label: red}, {value: 3, label: blue}]}
          - {id: 9, label: Shades, type: Picklist-Pick Multiple, options: [{value: 1, label: light}, {value: 3, label: dark}]}
          - {id: 10, label: Body, type: Textarea}
    records:
      - kind: thing
        id: 4
        created_by: bob
        fields:
          field_1: "  padded title  "
          field_2: 2025-03-31
          field_3: true
          field_4: 042
          field_5: 0.50
          field_6: [alice, 1]
          field_7: alice
          field_8: "3, 1"
          field_9: [3, 1, 3]
          field_10: |
            <p>two
            lines</p>
`
	a := mustParse(t, "values.yaml", doc).Accounts[0]
	got := a.Records[0].Values
	want := map[int64]string{1: "  padded title  ", 2: "2025-03-31", 3: "1", 4: "42", 5: "0.50", 6: "1", 7: "1",
		8: "1,3", 9: "1,3", 10: "<p>two\nlines</p>\n"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("field_%d = %q, want %q", id, got[id], w)
		}
	}
	if got, want := a.Objects[0].Fields[1].Type, core.TypeDate; got != want {
		t.Errorf("type date = %q, want %q", got, want)
	}
	if got, want := a.Records[0].CreatedByUsername, "bob"; got != want {
		t.Errorf("created_by = %q, want %q", got, want)
	}
}

func TestAliasesAreFollowed(t *testing.T) {
	doc := head + `    fields:
      re:
        - {id: 1, label: Title, type: Textbox, special_purpose: title}
        - {id: 2, label: Size, type: Picklist-Pick One, options: &sizes [{value: 1, label: S}, {value: 2, label: L}]}
      ft:
        - {id: 3, label: Title, type: Textbox, special_purpose: title}
        - {id: 4, label: Size, type: Picklist-Pick One, options: *sizes}
`
	a := mustParse(t, "alias.yaml", doc).Accounts[0]
	if got, want := len(a.Fields["ft"][1].Options), 2; got != want {
		t.Errorf("ft Size options = %d, want %d", got, want)
	}
}

func TestLoadFilesMerges(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	data := filepath.Join(dir, "data.yaml")
	other := filepath.Join(dir, "other.yaml")
	write := func(path, doc string) {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(users, "accounts:\n  - api_key: acme\n    name: Acme\n    users:\n      - {id: 1, username: alice, password: pw}\n")
	write(data, "accounts:\n  - api_key: acme\n    records:\n      - {kind: re, id: 1, created_by: alice, fields: {field_101: x, field_104: alice}}\n  - api_key: beta\n    name: Beta\n")
	p, err := LoadFiles(users, data, users)
	if err != nil {
		t.Fatalf("LoadFiles: %v", err)
	}
	if got, want := len(p.Accounts), 2; got != want {
		t.Fatalf("accounts = %d, want %d", got, want)
	}
	acme := p.Accounts[0]
	if acme.Name != "Acme" || len(acme.Users) != 1 || len(acme.Records) != 1 || acme.Records[0].Values[104] != "1" {
		t.Errorf("merged acme = %+v", acme)
	}

	tests := []struct {
		name, doc, want string
	}{
		{"name changes", "accounts:\n  - api_key: acme\n    name: Acme Inc\n", "other.yaml:3: account \"acme\" is named \"Acme\" at " + users + ":3; a second entry may repeat the name, not change it"},
		{"username again", "accounts:\n  - api_key: acme\n    users:\n      - {username: alice, password: x}\n", "other.yaml:4: username \"alice\" is already used in account \"acme\" at " + users + ":5"},
		{"kind fields twice", "accounts:\n  - api_key: acme\n    fields:\n      re:\n        - {id: 9, label: T, type: Text}\n", "other.yaml:4: fields of re for account \"acme\" are already given at "},
	}
	write(users, "accounts:\n  - api_key: acme\n    name: Acme\n    users:\n      - {id: 1, username: alice, password: pw}\n    fields:\n      re:\n        - {id: 8, label: T, type: Text}\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write(other, tt.doc)
			_, err := LoadFiles(users, other)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadFiles() = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := LoadFiles(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("LoadFiles(missing) succeeded")
	}
}

func TestDemoParses(t *testing.T) {
	if _, err := Parse("demo.yaml", slices.Clone(demoYAML)); err != nil {
		t.Fatalf("demo.yaml: %v", err)
	}
	p := Demo()
	if got, want := len(p.Accounts), 1; got != want {
		t.Fatalf("demo accounts = %d, want %d", got, want)
	}
	a := p.Accounts[0]
	if got, want := a.APIKey, DemoAPIKey; got != want {
		t.Errorf("api_key = %q, want %q", got, want)
	}
	for _, u := range []struct {
		name string
		id   int64
	}{{"demo", 1}, {"viewer", 2}} {
		i := slices.IndexFunc(a.Users, func(s core.UserSpec) bool { return s.Username == u.name })
		if i < 0 || a.Users[i].ID != u.id {
			t.Fatalf("user %s missing or not id %d", u.name, u.id)
		}
		if err := bcrypt.CompareHashAndPassword(a.Users[i].PasswordHash, []byte(u.name)); err != nil {
			t.Errorf("%s's password is not %q: %v", u.name, u.name, err)
		}
	}
	for i, kind := range core.BuiltinKinds {
		if got, want := ids(a.Fields[kind]), ids(standardTemplate(kind, int64(i+1)*100)); !slices.Equal(got, want) {
			t.Errorf("%s fields = %v, want the standard template %v", kind, got, want)
		}
	}
	types := map[core.FieldType]bool{}
	for _, f := range a.Objects[0].Fields {
		types[f.Type] = true
	}
	if got, want := len(types), 11; got != want {
		t.Errorf("the custom object has %d field types, want all %d", got, want)
	}
	if len(a.Views) != 2 || len(a.Records) < 24 || len(a.Relationships) < 10 {
		t.Errorf("demo has %d views, %d records, %d relationships", len(a.Views), len(a.Records), len(a.Relationships))
	}
	// Each call is a copy: changing one must not change the next.
	a.Users[0].Username = "changed"
	a.Fields["re"][0].Label = "changed"
	if again := Demo().Accounts[0]; again.Users[0].Username == "changed" || again.Fields["re"][0].Label == "changed" {
		t.Error("Demo() returned shared state")
	}
}

func TestDefaults(t *testing.T) {
	doc := `accounts:
  - api_key: acme
    users:
      - {username: zed, password: pw}
      - {username: amy, password: pw}
    views:
      - {id: 1, kind: uc, name: All}
    records:
      - {kind: uc, id: 1, fields: {field_301: x}}
`
	a := mustParse(t, "defaults.yaml", doc).Accounts[0]
	if got, want := a.Name, "acme"; got != want {
		t.Errorf("name = %q, want the api_key %q", got, want)
	}
	if got, want := a.Views[0].CreatedByUsername, "zed"; got != want {
		t.Errorf("view created_by = %q, want the first user %q", got, want)
	}
	if got, want := a.Records[0].CreatedByUsername, "zed"; got != want {
		t.Errorf("record created_by = %q, want the first user %q", got, want)
	}
	if got, want := a.Users[1].Status, "Active"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
