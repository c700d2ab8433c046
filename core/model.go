// Package core is the requirements-management service behind reqgate: the domain types of the XML REST
// interface of docs/api.md (accounts, users, objects, fields, records, views, relationships, field history),
// the Store contract its storage engines implement, and the rules shared by the HTTP layer and the account
// file (value validation, the search-condition language).
//
// Sub-packages: sqlite and postgres implement Store; storetest is the suite both must pass; accounts reads
// account files; api serves the XML interface over HTTP.
package core

import "strings"

// Account is an organisation, addressed by the api_key of the base URL.
type Account struct {
	ID     int64 // internal key; never shown on the wire
	APIKey string
	Name   string
}

// User is a person of an account. Users are read-only through the API; account files provision them.
type User struct {
	ID           int64 // user_id, unique within the account
	Username     string
	Email        string
	FirstName    string
	LastName     string
	Status       string // "Active" unless the account file says otherwise
	Deleted      bool
	PasswordHash []byte // bcrypt hash; a user with no hash can never authenticate
}

// DisplayName is the text shown for a user in user picklists and history.
func (u User) DisplayName() string { return strings.TrimSpace(u.FirstName + " " + u.LastName) }

// Built-in kinds of record.
const (
	KindRequirement = "re"
	KindFeature     = "ft"
	KindUseCase     = "uc"
)

// BuiltinKinds lists the built-in kinds in the order the interface shows them.
var BuiltinKinds = []string{KindRequirement, KindFeature, KindUseCase}

// Object is a kind of record: one of the built-in kinds or an account's custom object.
type Object struct {
	UniqueID     string // opaque, stable, URL-safe
	APIPrefix    string // path segment: re, ft, uc, or the custom object's api_prefix
	NameSingular string
	NamePlural   string
	Description  string
	IDPrefix     string // without dash: RE, FT, UC, or the custom object's own (e.g. RSK)
	Custom       bool
}

// RootElement is the root element of one record of this kind (and of its summaries).
func (o Object) RootElement() string {
	switch o.APIPrefix {
	case KindRequirement:
		return "requirement"
	case KindFeature:
		return "feature"
	case KindUseCase:
		return "use_case"
	}
	return "custom_object"
}

// FieldsElement is the root element of this kind's field-definition list.
func (o Object) FieldsElement() string { return o.RootElement() + "_fields" }

// WirePrefix is the id prefix shown in record reads, summaries and related items: RE-, FT-, UC-, or CO- for
// every custom object.
func (o Object) WirePrefix() string {
	if o.Custom {
		return "CO-"
	}
	return o.IDPrefix + "-"
}

// FieldType is the <type> of a field definition.
type FieldType string

// Field types. Stored values (Record.Values) are text in a canonical form per type; see Field.Canonical.
const (
	TypeInteger      FieldType = "Number-Integer"         // decimal integer
	TypeTextbox      FieldType = "Textbox"                // text
	TypeTextarea     FieldType = "Textarea"               // HTML
	TypePickOne      FieldType = "Picklist-Pick One"      // option value (or user id) as a decimal integer
	TypePickMultiple FieldType = "Picklist-Pick Multiple" // option values (or user ids), comma-separated, ascending, no duplicates
	TypeText         FieldType = "Text"                   // text
	TypeEmail        FieldType = "Email"                  // text
	TypeURL          FieldType = "URL"                    // an absolute http or https URL, as written
	TypeNumber       FieldType = "Number"                 // decimal number as written
	TypeDate         FieldType = "Date"                   // YYYY-MM-DD
	TypeCheckbox     FieldType = "Checkbox"               // "0" or "1"
)

// Picklist list types.
const (
	ListNormal = "normal"
	ListUser   = "user"
)

// Field is a field definition of one kind of an account.
type Field struct {
	ID             int64 // the <n> of field_<n>; unique within the account
	Kind           string
	Label          string
	Type           FieldType
	SpecialPurpose string // id | title | desc | product | tags | status | owner, or empty
	Required       bool
	Sort           int
	Help           string
	DefaultValue   string
	MaxSize        int    // 0: no limit
	ListType       string // ListNormal or ListUser for picklists, empty otherwise
	Options        []Option
}

// Name is the field's <name> on the wire: field_<n>.
func (f Field) Name() string { return "field_" + itoa(f.ID) }

// IsPicklist reports whether the field is a single or multiple picklist.
func (f Field) IsPicklist() bool { return f.Type == TypePickOne || f.Type == TypePickMultiple }

// Option is one choice of a picklist.
type Option struct {
	Value   int64
	Label   string
	Desc    string
	Sort    int
	Default bool
}

// Record is one requirement, feature, use case or custom-object record.
type Record struct {
	Kind            string
	ID              int64
	Version         int64
	CreatedTime     int64 // UNIX seconds, GMT
	CreatedBy       int64 // user id
	LastUpdatedTime int64
	LastUpdatedBy   int64
	DeletedTime     int64 // 0 while the record is live
	VersionComment  string
	Values          map[int64]string // field id -> canonical stored value; absent and "" both mean empty
}

// Summary is the short form of a record used by view contents, search results and related items.
type Summary struct {
	Kind            string
	ID              int64
	Title           string // value of the kind's title field (special_purpose title), "" when none
	Version         int64
	CreatedTime     int64
	LastUpdatedTime int64
	CreatedBy       int64
	LastUpdatedBy   int64
}

// Relationship directions as the interface names them.
const (
	RelParentOf  = "Is Parent Of"
	RelChildOf   = "Is Child Of"
	RelRelatedTo = "Is Related To"
)

// Relation is a record related to the queried one, with the direction seen from the queried record.
type Relation struct {
	Type string // RelParentOf, RelChildOf or RelRelatedTo
	Summary
}

// Change is one recorded change of one field of a record (field history).
type Change struct {
	FieldID int64
	UserID  int64
	Time    int64
	Old     string // canonical stored forms, "" for empty
	New     string
}

// View is a saved list of records of one kind: the live result of its conditions.
type View struct {
	ID          int64
	Kind        string
	Name        string
	Description string
	CreatedBy   int64  // user id
	Conditions  string // the search-condition language of docs/api.md; empty: every live record of the kind
}
