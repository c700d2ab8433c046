package accounts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// head is a valid account every refusal case builds on (lines 1-6).
const head = `accounts:
  - api_key: acme
    name: Acme
    users:
      - {id: 1, username: alice, password: pw, email: a@acme.test}
      - {username: bob, password: pw}
`

// markedLine returns the 1-based line holding the marker "#<", which the cases put on the line the refusal
// must name.
func markedLine(t *testing.T, doc string) int {
	t.Helper()
	for i, l := range strings.Split(doc, "\n") {
		if strings.Contains(l, "#<") {
			return i + 1
		}
	}
	t.Fatalf("case has no #< marker:\n%s", doc)
	return 0
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name   string
		doc    string // the whole file; "+" at the start means head + the rest
		reason string // a substring of the reason
	}{
		{"empty file", "#<\n", "the file is empty"},
		{"not a mapping", "- a #<\n", "the file must be a mapping"},
		{"unknown top-level key", "acounts: [] #<\n", `unknown key "acounts"`},
		{"no account", "accounts: [] #<\n", "provisions no account"},
		{"second document", head + "--- #<\naccounts: []\n", "a second YAML document"},
		{"unknown account key", "+    colour: red #<\n", `unknown key "colour" in account`},
		{"duplicate key", "+    name: Other #<\n", `duplicate key "name" in account (first at line 3)`},
		{"merge key", "accounts:\n  - <<: {api_key: x} #<\n", "merge keys (<<) are not supported"},
		{"api_key missing", "accounts:\n  - name: Acme #<\n", "api_key is required"},
		{"api_key pattern", "accounts:\n  - api_key: acme corp #<\n    name: Acme\n", "may hold only letters, digits, '-' and '_'"},
		{"api_key slash", "accounts:\n  - api_key: a/b #<\n    name: Acme\n", "may hold only letters"},
		{"users not a list", "accounts:\n  - api_key: acme\n    name: A\n    users: alice #<\n", "users must be a list"},

		// users
		{"username missing", "+      - {password: pw} #<\n", "username is required"},
		{"password missing", "+      - {username: carol} #<\n", "password is required"},
		{"password empty", "+      - {username: carol, password: \"\"} #<\n", "password is required"},
		{"password too long", "+      - {username: carol, password: " + strings.Repeat("x", 73) + "} #<\n", "longer than 72 bytes"},
		{"duplicate username", "+      - {username: alice, password: pw} #<\n", `username "alice" is already used in account "acme" at refuse:5`},
		{"duplicate user id", "+      - {id: 1, username: carol, password: pw} #<\n", "user id 1 is already used"},
		{"user id not a number", "+      - {id: one, username: carol, password: pw} #<\n", `id must be a whole number, not "one"`},
		{"user id negative", "+      - {id: -3, username: carol, password: pw} #<\n", "id must be between 1 and"},
		{"username with colon", "+      - {username: \"c:d\", password: pw} #<\n", "may not hold spaces or ':'"},
		{"bad email", "+      - {username: carol, password: pw, email: carol} #<\n", "is not an email address"},
		{"unknown user key", "+      - {username: carol, password: pw, role: admin} #<\n", `unknown key "role" in user`},
		{"bad deleted flag", "+      - {username: carol, password: pw, deleted: maybe} #<\n", "deleted must be true or false"},

		// fields
		{"fields of an unknown kind", "+    fields:\n      risk: [] #<\n", `unknown key "risk" in fields`},
		{"empty field list", "+    fields:\n      re: [] #<\n", "leave the kind out to get the standard template"},
		{"bad field type", "+    fields:\n      re:\n        - {id: 1, label: T, type: String} #<\n", `type "String" is not a field type`},
		{"type missing", "+    fields:\n      re:\n        - {id: 1, label: T} #<\n", "type is required"},
		{"label missing", "+    fields:\n      re:\n        - {id: 1, type: Text} #<\n", "label is required"},
		{"bad special purpose", "+    fields:\n      re:\n        - {id: 1, label: T, type: Text, special_purpose: name} #<\n", `special_purpose "name" is not one of`},
		{"title of wrong type", "+    fields:\n      re:\n        - {id: 1, label: T, type: Date, special_purpose: title} #<\n", "special_purpose title needs a field of type Textbox or Text"},
		{"owner needs users", "+    fields:\n      re:\n        - {id: 1, label: O, type: Picklist-Pick One, special_purpose: owner, options: [{value: 1, label: x}]} #<\n", "list_type user"},
		{"special purpose twice", "+    fields:\n      re:\n        - {id: 1, label: T, type: Text, special_purpose: title}\n        - {id: 2, label: U, type: Text, special_purpose: title} #<\n", `special_purpose "title" is already used in re by the field at line 9`},
		{"label twice", "+    fields:\n      re:\n        - {id: 1, label: T, type: Text}\n        - {id: 2, label: t, type: Text} #<\n", `label "t" is already used in re`},
		{"field id twice across kinds", "+    fields:\n      re:\n        - {id: 7, label: T, type: Text}\n      ft:\n        - {id: 7, label: T, type: Text} #<\n", "field id 7 is already used in account \"acme\" at refuse:9"},
		{"field id of a custom object", "+    fields:\n      re:\n        - {id: 7, label: T, type: Text}\n    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 7, label: T, type: Text} #<\n", "field id 7 is already used"},
		{"field id zero", "+    fields:\n      re:\n        - {id: 0, label: T, type: Text} #<\n", "id must be between 1 and"},
		{"list_type on text", "+    fields:\n      re:\n        - {id: 1, label: T, type: Text, list_type: user} #<\n", "list_type is for picklists only"},
		{"options on text", "+    fields:\n      re:\n        - {id: 1, label: T, type: Text, options: [{value: 1, label: x}]} #<\n", "options are for picklists only"},
		{"bad list_type", "+    fields:\n      re:\n        - {id: 1, label: T, type: Picklist-Pick One, list_type: team} #<\n", `list_type "team" is not normal or user`},
		{"user picklist with options", "+    fields:\n      re:\n        - {id: 1, label: T, type: Picklist-Pick One, list_type: user, options: [{value: 1, label: x}]} #<\n", "a user picklist takes no options"},
		{"picklist without options", "+    fields:\n      re:\n        - {id: 1, label: T, type: Picklist-Pick One} #<\n", "needs options"},
		{"option value twice", "+    fields:\n      re:\n        - id: 1\n          label: P\n          type: Picklist-Pick Multiple\n          options:\n            - {value: 1, label: a}\n            - {value: 1, label: b} #<\n", "option value 1 is already used in \"P\" at line 13"},
		{"option label twice", "+    fields:\n      re:\n        - id: 1\n          label: P\n          type: Picklist-Pick One\n          options:\n            - {value: 1, label: a}\n            - {value: 2, label: A} #<\n", `option label "A" is already used`},
		{"option value not an integer", "+    fields:\n      re:\n        - id: 1\n          label: P\n          type: Picklist-Pick One\n          options:\n            - {value: high, label: a} #<\n", "value must be a whole number"},
		{"option value missing", "+    fields:\n      re:\n        - id: 1\n          label: P\n          type: Picklist-Pick One\n          options:\n            - {label: a} #<\n", "option: value is required"},
		{"two defaults for pick one", "+    fields:\n      re:\n        - id: 1\n          label: P\n          type: Picklist-Pick One\n          options:\n            - {value: 1, label: a, default: true}\n            - {value: 2, label: b, default: true} #<\n", "only one option may be the default"},
		{"max_size negative", "+    fields:\n      re:\n        - {id: 1, label: T, type: Textbox, max_size: -1} #<\n", "max_size must be between 0 and"},
		{"default not an option", "+    fields:\n      re:\n        - {id: 1, label: P, type: Picklist-Pick One, default_value: \"9\", options: [{value: 1, label: a}]} #<\n", "default_value of \"P\": not a valid option: 9"},
		{"default not a number", "+    fields:\n      re:\n        - {id: 1, label: N, type: Number-Integer, default_value: lots} #<\n", "not an integer"},
		{"unknown field key", "+    fields:\n      re:\n        - {id: 1, label: T, type: Text, hidden: true} #<\n", `unknown key "hidden" in field`},

		// custom objects
		{"api_prefix upper case", "+    custom_objects:\n      - {api_prefix: Risk, name_singular: Risk, id_prefix: RSK} #<\n", "lower-case letters and digits"},
		{"api_prefix reserved", "+    custom_objects:\n      - {api_prefix: user, name_singular: U, id_prefix: USR} #<\n", `api_prefix "user" is taken`},
		{"api_prefix built in", "+    custom_objects:\n      - {api_prefix: re, name_singular: U, id_prefix: USR} #<\n", `api_prefix "re" is taken`},
		{"api_prefix twice", "+    custom_objects:\n      - {api_prefix: risk, name_singular: Risk, id_prefix: RSK}\n      - {api_prefix: risk, name_singular: Risk, id_prefix: RSX} #<\n", `api_prefix "risk" is already used`},
		{"id_prefix twice", "+    custom_objects:\n      - {api_prefix: risk, name_singular: Risk, id_prefix: RSK}\n      - {api_prefix: risk2, name_singular: Risk, id_prefix: RSK} #<\n", `id_prefix "RSK" is already used`},
		{"id_prefix lower case", "+    custom_objects:\n      - {api_prefix: risk, name_singular: Risk, id_prefix: rsk} #<\n", "must be upper-case letters and digits"},
		{"id_prefix CO", "+    custom_objects:\n      - {api_prefix: risk, name_singular: Risk, id_prefix: CO} #<\n", `id_prefix "CO" is taken`},
		{"id_prefix missing", "+    custom_objects:\n      - {api_prefix: risk, name_singular: Risk} #<\n", "id_prefix is required"},
		{"name_singular missing", "+    custom_objects:\n      - {api_prefix: risk, id_prefix: RSK} #<\n", "name_singular is required"},

		// views
		{"view id missing", "+    views:\n      - {kind: re, name: V, created_by: alice} #<\n", "view: id is required"},
		{"view id twice", "+    views:\n      - {id: 1, kind: re, name: V, created_by: alice}\n      - {id: 1, kind: ft, name: W, created_by: alice} #<\n", "view id 1 is already used"},
		{"view of an unknown kind", "+    views:\n      - {id: 1, kind: risk, name: V, created_by: alice} #<\n", `view kind "risk" is not a kind of account "acme" (re, ft, uc)`},
		{"view by a stranger", "+    views:\n      - {id: 1, kind: re, name: V, created_by: mallory} #<\n", `created_by "mallory" is not a user`},
		{"view conditions syntax", "+    views:\n      - {id: 1, kind: re, name: V, created_by: alice, conditions: \"field_103\"} #<\n", "conditions: field_103: not a condition"},
		{"view conditions unknown field", "+    views:\n      - {id: 1, kind: re, name: V, created_by: alice, conditions: \"field_999=1\"} #<\n", "unknown field field_999"},
		{"view conditions on a textarea", "+    views:\n      - {id: 1, kind: re, name: V, created_by: alice, conditions: \"field_102=x\"} #<\n", "search supports only Picklist and Textbox fields"},
		{"view conditions on deleted records", "+    views:\n      - {id: 1, kind: re, name: V, created_by: alice, conditions: \"field_103=1&deleted_time>1700000000\"} #<\n", "conditions: deleted_time>1700000000: a view lists live records, so its conditions take no deleted_time"},
		{"view conditions time with =", "+    views:\n      - {id: 1, kind: re, name: V, created_by: alice, conditions: \"created_time=5\"} #<\n", "the operator = is not supported; created_time takes < or >"},

		// records
		{"record id missing", "+    records:\n      - {kind: re, created_by: alice, fields: {field_101: x}} #<\n", "record: id is required"},
		{"record kind unknown", "+    records:\n      - {kind: bug, id: 1, created_by: alice, fields: {field_101: x}} #<\n", `record kind "bug" is not a kind`},
		{"record twice", "+    records:\n      - {kind: re, id: 1, created_by: alice, fields: {field_101: x}}\n      - {kind: re, id: 1, created_by: alice, fields: {field_101: y}} #<\n", "record re 1 is already given at refuse:8"},
		{"record by a stranger", "+    records:\n      - {kind: re, id: 1, created_by: eve, fields: {field_101: x}} #<\n", `created_by "eve" is not a user`},
		{"record created_by without users", "accounts:\n  - api_key: acme\n    records:\n      - {kind: re, id: 1, fields: {field_101: x}} #<\n", "created_by is required: account \"acme\" has no users"},
		{"view created_by without users", "accounts:\n  - api_key: acme\n    views:\n      - {id: 1, kind: re, name: V} #<\n", "created_by is required"},
		{"record fields missing", "+    records:\n      - {kind: re, id: 1, created_by: alice} #<\n", "fields is required"},
		{"record bad field name", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          title: x #<\n", `"title" is not a field name`},
		{"record field of another kind", "+    records:\n      - {kind: re, id: 1, created_by: alice, fields: {field_101: x, field_201: y}} #<\n", "field_201 is not a field of re"},
		{"record bad option", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_103: 7 #<\n", "field_103 (Status): not a valid option: 7"},
		{"record list for a single picklist", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_103: [1, 2] #<\n", "only Picklist-Pick Multiple takes a list"},
		{"record bad multi option", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_106: \"1,9\" #<\n", "not a valid option: 9"},
		{"record required missing", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields: #<\n          field_102: only a description\n", "required field field_101 (Title) has no value"},
		{"record required empty", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields: #<\n          field_101: \"\"\n", "required field field_101 (Title) has no value"},
		{"record unknown username", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_104: carol #<\n", `"carol" is neither a user id nor a username`},
		{"record username without id", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_104: bob #<\n", `user "bob" has no id in the file`},
		{"record unknown user id", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_104: 9 #<\n", "not a user of the account: 9"},
		{"record value too long", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: " + strings.Repeat("x", 256) + " #<\n", "longer than max_size 255"},
		{"record created_time negative", "+    records:\n      - {kind: re, id: 1, created_by: alice, created_time: -5, fields: {field_101: x}} #<\n", "created_time must be between"},
		{"record value a mapping", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: {a: b} #<\n", "must be a value or a list of values"},
		{"record number NaN", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: NaN #<\n", "field_1 (Score): not a decimal number"},
		{"record number infinite", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: -Infinity #<\n", "field_1 (Score): not a decimal number"},
		{"record number hexadecimal", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: 0x1p4 #<\n", "field_1 (Score): not a decimal number"},
		{"record number with underscore", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: 1_0 #<\n", "field_1 (Score): not a decimal number"},
		{"record number with exponent", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: 1e3 #<\n", "field_1 (Score): not a decimal number"},
		{"record number without a whole part", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: .5 #<\n", "field_1 (Score): not a decimal number"},
		{"record email without a domain", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_2: a@ #<\n", "field_2 (Mail): not an email address"},
		{"record email without a local part", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Score, type: Number}\n          - {id: 2, label: Mail, type: Email}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_2: \"@b\" #<\n", "field_2 (Mail): not an email address"},
		{"record multi with an empty item", "+    records:\n      - kind: re\n        id: 1\n        created_by: alice\n        fields:\n          field_101: x\n          field_106: \"1,,3\" #<\n", "field_106 (Tags): empty item in the list of values"},
		{"default number with exponent", "+    fields:\n      re:\n        - {id: 1, label: N, type: Number, default_value: 1e3} #<\n", "not a decimal number"},
		{"default multi with an empty item", "+    fields:\n      re:\n        - {id: 1, label: P, type: Picklist-Pick Multiple, default_value: \",1\", options: [{value: 1, label: a}]} #<\n", "empty item in the list of values"},
		{"record bad date", "+    custom_objects:\n      - api_prefix: risk\n        name_singular: Risk\n        id_prefix: RSK\n        fields:\n          - {id: 1, label: Due, type: Date}\n    records:\n      - kind: risk\n        id: 1\n        created_by: alice\n        fields:\n          field_1: 31/12/2025 #<\n", "not a date (YYYY-MM-DD)"},

		// relationships
		{"relationship bad ref", "+    relationships:\n      - {from: RE1, to: FT-1, type: parent} #<\n", `from "RE1" does not name a record`},
		{"relationship unknown prefix", "+    relationships:\n      - {from: RE-1, to: RSK-1, type: parent} #<\n", "no kind of account \"acme\" has the id prefix RSK"},
		{"relationship CO prefix", "+    relationships:\n      - {from: RE-1, to: CO-1, type: related} #<\n", "has the id prefix CO"},
		{"relationship bad type", "+    relationships:\n      - {from: RE-1, to: FT-1, type: child} #<\n", `relationship type "child" is not parent or related`},
		{"relationship type missing", "+    relationships:\n      - {from: RE-1, to: FT-1} #<\n", "type is required"},
		{"relationship to itself", "+    relationships:\n      - {from: RE-1, to: RE-1, type: related} #<\n", "cannot be related to itself"},
		{"relationship twice", "+    relationships:\n      - {from: RE-1, to: FT-1, type: parent}\n      - {from: FT-1, to: RE-1, type: related} #<\n", "already linked at refuse:8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			if strings.HasPrefix(doc, "+") {
				doc = head + doc[1:]
			}
			_, err := Parse("refuse", []byte(doc))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse() error = %v, want an *Error", err)
			}
			if got, want := e.Line, markedLine(t, doc); got != want {
				t.Errorf("line = %d, want %d (%v)", got, want, err)
			}
			if got, want := e.Reason, tt.reason; !strings.Contains(got, want) {
				t.Errorf("reason = %q, want it to contain %q", got, want)
			}
			if got, want := e.File, "refuse"; got != want {
				t.Errorf("file = %q, want %q", got, want)
			}
		})
	}
}

func TestSyntaxErrorsNameALine(t *testing.T) {
	for _, doc := range []string{"accounts: [\n", "accounts:\n  - api_key: \"a\n", "\t- x\n", "accounts:\n  - &a [*a]\n"} {
		_, err := Parse("bad.yaml", []byte(doc))
		var e *Error
		if !errors.As(err, &e) || e.Line < 1 || !strings.HasPrefix(err.Error(), "bad.yaml:") {
			t.Errorf("Parse(%q) = %v, want a bad.yaml:<line>: refusal", doc, err)
		}
	}
}

func TestErrorText(t *testing.T) {
	err := error(&Error{File: "acme.yaml", Line: 12, Reason: "api_key is required"})
	if got, want := err.Error(), "acme.yaml:12: api_key is required"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestTooLargeFile(t *testing.T) {
	data := make([]byte, MaxFileBytes+1)
	for i := range data {
		data[i] = '\n'
	}
	_, err := Parse("huge.yaml", data)
	var e *Error
	if !errors.As(err, &e) || e.Line != 1 || !strings.Contains(e.Reason, "larger than") {
		t.Errorf("Parse(huge) = %v, want huge.yaml:1: ...larger than...", err)
	}
}

// TestEveryRefusal checks that one read reports every independent refusal, in file order and each with its
// line, across the items of an account, across accounts and across files; and that a file broken throughout
// gives at most MaxErrors of them.
func TestEveryRefusal(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // every refusal, in order
	}{
		{
			name: "items of one account",
			files: map[string]string{"a.yaml": head + `      - {username: carol}
      - {username: "d e", password: pw}
    records:
      - {kind: re, id: 1, fields: {field_101: x}}
`},
			want: []string{`a.yaml:7: user "carol": password is required`, `a.yaml:8: username "d e" may not hold spaces`},
		},
		{
			name: "records and relationships, after the users passed",
			files: map[string]string{"a.yaml": head + `    records:
      - {kind: bug, id: 1, fields: {field_101: x}}
      - {kind: re, id: 2, created_by: eve, fields: {field_101: x}}
      - {kind: re, id: 3, fields: {field_101: x, field_103: 7}}
`},
			want: []string{`a.yaml:8: record kind "bug"`, `a.yaml:9: created_by "eve"`, `a.yaml:10: field_103 (Status): not a valid option: 7`},
		},
		{
			name: "accounts and files",
			files: map[string]string{
				"a.yaml": "accounts:\n  - {name: No key}\n  - {api_key: b c}\n",
				"b.yaml": "acounts: []\n",
			},
			want: []string{"a.yaml:2: account: api_key is required", `a.yaml:3: api_key "b c" may hold only`, `b.yaml:1: unknown key "acounts"`},
		},
		{
			// The rules across an account's items (here a username used twice) are checked for every account
			// none of whose items was refused, even when another account of the file was: in file order.
			name: "an account's rules beside another account's refusal",
			files: map[string]string{"a.yaml": `accounts:
  - api_key: beta
    users:
      - {username: carol}
  - api_key: acme
    users:
      - {username: alice, password: pw}
      - {username: alice, password: pw}
  - {api_key: "g h"}
`},
			want: []string{`a.yaml:4: user "carol": password is required`, `a.yaml:8: username "alice" is already used`, `a.yaml:9: api_key "g h" may hold only`},
		},
		{
			name: "an account's rules beside another file's refusal",
			files: map[string]string{
				"a.yaml": "accounts:\n  - api_key: acme\n    users:\n      - {id: 1, username: alice, password: pw}\n      - {id: 1, username: bob, password: pw}\n",
				"b.yaml": "accounts:\n  - {api_key: beta, colour: red}\n",
			},
			want: []string{"a.yaml:5: user id 1 is already used", `b.yaml:2: unknown key "colour" in account`},
		},
		{
			// carol was refused, so the record that names her is not refused for naming no user.
			name: "no refusal for an item left out",
			files: map[string]string{"a.yaml": head + `      - {username: carol}
    records:
      - {kind: re, id: 1, created_by: carol, fields: {field_101: x}}
`},
			want: []string{`a.yaml:7: user "carol": password is required`},
		},
		{
			// Nor when the entry left out is another file's part of the same account.
			name: "no refusal for an entry left out",
			files: map[string]string{
				"a.yaml": "accounts:\n  - api_key: acme\n    records:\n      - {kind: re, id: 1, created_by: zed, fields: {field_101: x}}\n",
				"b.yaml": "accounts:\n  - api_key: acme\n    colour: red\n    users:\n      - {username: zed, password: pw}\n",
			},
			want: []string{`b.yaml:3: unknown key "colour" in account`},
		},
		{
			// A file refused as a whole may hold part of any account: the rules across items wait for it.
			name: "a file refused whole",
			files: map[string]string{
				"a.yaml": "accounts:\n  - api_key: acme\n    records:\n      - {kind: re, id: 1, created_by: zed, fields: {field_101: x}}\n",
				"b.yaml": "accounts: [\n",
			},
			want: []string{"b.yaml:1: malformed YAML"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for _, name := range []string{"a.yaml", "b.yaml"} {
				if content, ok := tt.files[name]; ok {
					p := filepath.Join(dir, name)
					if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
						t.Fatal(err)
					}
					paths = append(paths, p)
				}
			}
			_, err := LoadFiles(paths...)
			if err == nil {
				t.Fatal("LoadFiles accepted the files")
			}
			lines := strings.Split(strings.ReplaceAll(err.Error(), dir+"/", ""), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d refusals, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("refusal %d = %q, want %q", i+1, lines[i], want)
				}
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Error(), strings.SplitN(tt.want[0], ":", 2)[0]) {
				t.Errorf("errors.As finds %v, want the first refusal %q", e, tt.want[0])
			}
		})
	}

	t.Run("bounded", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; i < 3*MaxErrors; i++ {
			fmt.Fprintf(&b, "      - {username: u%d}\n", i)
		}
		_, err := Parse("many.yaml", []byte(b.String()))
		lines := strings.Split(fmt.Sprint(err), "\n")
		if len(lines) != MaxErrors+1 || !strings.Contains(lines[MaxErrors], "stopped after") {
			t.Fatalf("%d lines, want %d refusals and a last line saying it stopped; last: %q", len(lines), MaxErrors, lines[len(lines)-1])
		}
	})
}
