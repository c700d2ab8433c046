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
	if err := applyEach(BuiltinObjects(), ap.UpsertObject); err != nil {
		return err
	}
	if err := ap.ApplyUsers(a.Users); err != nil {
		return err
	}
	if err := applyBuiltinFields(ap, a.Fields); err != nil {
		return err
	}
	if err := applyCustomObjects(ap, a.Objects); err != nil {
		return err
	}
	if err := ap.Reindex(); err != nil {
		return err
	}
	if err := applyEach(a.Views, ap.ApplyView); err != nil {
		return err
	}
	if err := applyEach(a.Records, ap.ApplyRecord); err != nil {
		return err
	}
	return applyEach(a.Relationships, ap.ApplyRelationship)
}

// applyEach applies the items in order and stops at the first error.
func applyEach[T any](items []T, apply func(T) error) error {
	for _, it := range items {
		if err := apply(it); err != nil {
			return err
		}
	}
	return nil
}

// applyBuiltinFields applies the fields of the built-in kinds, in the order of their names.
func applyBuiltinFields(ap AccountApplier, fields map[string][]Field) error {
	for _, kind := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(BuiltinKinds, kind) {
			return Invalid("fields."+kind, "not a built-in kind (re, ft, uc)")
		}
		if err := ap.ApplyFields(kind, fields[kind]); err != nil {
			return err
		}
	}
	return nil
}

// applyCustomObjects applies the custom objects, each followed by its fields.
func applyCustomObjects(ap AccountApplier, objects []ObjectSpec) error {
	for _, o := range objects {
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
	return nil
}
