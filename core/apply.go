package core

import (
	"maps"
	"slices"
)

// AccountApplier is a store's transaction applying one account of an account file: each method does the
// SQL of one step. ApplyAccount calls them in the order every store follows, so the rules of an account
// file (what is refused, what is matched before what) are written once.
type AccountApplier interface {
	UpsertAccount(name string) error          // the account itself, by api_key
	UpsertObject(o Object) error              // a built-in or custom object, by api_prefix
	ApplyUsers(specs []UserSpec) error        // the users (see AssignUserIDs)
	ApplyFields(kind string, f []Field) error // the fields of a kind
	Reindex() error                           // search terms of kinds whose searchable fields changed type
	ApplyView(v ViewSpec) error
	ApplyRecord(r RecordSpec) error
	ApplyRelationship(r RelationshipSpec) error
}

// ApplyAccount applies a in order: account, built-in objects, users, fields of the built-in kinds, custom
// objects with their fields, re-indexing, views, seed records, relationships. The first error stops it (the
// store's transaction then rolls the whole file back).
func ApplyAccount(ap AccountApplier, a *AccountSpec) error {
	if a.APIKey == "" {
		return Invalid("api_key", "empty")
	}
	if err := ap.UpsertAccount(a.Name); err != nil {
		return err
	}
	for _, o := range BuiltinObjects() {
		if err := ap.UpsertObject(o); err != nil {
			return err
		}
	}
	if err := ap.ApplyUsers(a.Users); err != nil {
		return err
	}
	for _, kind := range slices.Sorted(maps.Keys(a.Fields)) {
		if !slices.Contains(BuiltinKinds, kind) {
			return Invalid("fields."+kind, "not a built-in kind (re, ft, uc)")
		}
		if err := ap.ApplyFields(kind, a.Fields[kind]); err != nil {
			return err
		}
	}
	for _, o := range a.Objects {
		if o.APIPrefix == "" || slices.Contains(BuiltinKinds, o.APIPrefix) {
			return Invalid("custom_objects."+o.APIPrefix, "api_prefix must be set and not re, ft or uc")
		}
		o.Custom = true
		if err := ap.UpsertObject(o.Object); err != nil {
			return err
		}
		if err := ap.ApplyFields(o.APIPrefix, o.Fields); err != nil {
			return err
		}
	}
	if err := ap.Reindex(); err != nil {
		return err
	}
	for _, v := range a.Views {
		if err := ap.ApplyView(v); err != nil {
			return err
		}
	}
	for _, r := range a.Records {
		if err := ap.ApplyRecord(r); err != nil {
			return err
		}
	}
	for _, r := range a.Relationships {
		if err := ap.ApplyRelationship(r); err != nil {
			return err
		}
	}
	return nil
}
