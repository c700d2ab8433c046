package api

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reqgate/reqgate/core"
)

// systemFields are the system fields of a record read that the core sets, with their stored values. A write
// may not set them; an update may send them back unchanged (see checkWrite).
var systemFields = map[string]func(core.Record) int64{
	"version_number":    func(r core.Record) int64 { return r.Version },
	"created_time":      func(r core.Record) int64 { return r.CreatedTime },
	"last_updated_time": func(r core.Record) int64 { return r.LastUpdatedTime },
	"created_by":        func(r core.Record) int64 { return r.CreatedBy },
	"last_updated_by":   func(r core.Record) int64 { return r.LastUpdatedBy },
}

// notCustom are the names a write of a built-in kind's record may send that a custom object's record read never
// shows, so a write of one may not send them either.
var notCustom = map[string]bool{"version_comment": true, "created_by": true, "last_updated_by": true}

// writeValues is a validated record write.
type writeValues struct {
	values  map[int64]string // field id -> canonical value
	comment *string          // version_comment, when sent
}

// checkWrite validates the fields of a write body against the kind's fields. On create (stored nil) the id
// and system fields may not be sent and every required field must be; absent fields get their default.
// On update a record read may be sent back as it is (read, modify, write): the id and the system fields are
// ignored when they hold the stored values and refused when they differ, and a field whose value is the
// stored one is left alone unvalidated (an option removed since, a required field stored empty). A
// required field may not be cleared. A Textarea is HTML; in version 1, where reads show it as plain text,
// a write is plain text too (see textareaValue). Errors are *core.ValidationError naming the field.
func checkWrite(body []bodyField, obj core.Object, fields []core.Field, sc *schema, stored *core.Record, version int) (writeValues, error) {
	wc := writeCheck{
		custom:  obj.Custom,
		fields:  fields,
		stored:  stored,
		version: version,
		isUser: func(id int64) bool {
			u, ok := sc.user(id)
			return ok && !u.Deleted
		},
		out: writeValues{values: make(map[int64]string, len(body))},
	}
	seen := make(map[string]bool, len(body))
	for _, bf := range body {
		if seen[bf.Name] {
			return wc.out, core.Invalid(bf.Name, "sent more than once")
		}
		seen[bf.Name] = true
		if err := wc.field(bf); err != nil {
			return wc.out, err
		}
	}
	if stored != nil {
		if len(body) == 0 {
			return wc.out, core.Invalid("", "the body names no field to update")
		}
		return wc.out, nil
	}
	return wc.out, core.AddDefaults(wc.fields, wc.out.values, wc.isUser)
}

// writeCheck is the state of one checkWrite.
type writeCheck struct {
	custom  bool // a custom object's record, whose reads show no version comment and no created_by/last_updated_by
	fields  []core.Field
	stored  *core.Record // nil on create
	version int
	isUser  func(id int64) bool // whether id is a user who may be a field's value
	out     writeValues
}

// field checks one field of the body: the id, the version comment, a system field or a field of the kind.
func (wc *writeCheck) field(bf bodyField) error {
	switch {
	case bf.Name == "id":
		return checkID(bf, wc.stored)
	case wc.custom && notCustom[bf.Name]:
		// A custom object's record has no version comment: one sent would raise the version with nothing
		// visible changed. It and the user fields its reads leave out are unknown fields there.
		return core.Invalid(clip(bf.Name), "unknown field")
	case bf.Name == "version_comment":
		if utf8.RuneCountInString(bf.Value) > 30000 {
			return core.Invalid("version_comment", "longer than max_size 30000")
		}
		c := bf.Value
		wc.out.comment = &c
		return nil
	case systemFields[bf.Name] != nil:
		return checkSystemField(bf, wc.stored)
	}
	return wc.value(bf)
}

// value checks a field of the kind and keeps its canonical value, unless an update sends the stored value.
func (wc *writeCheck) value(bf bodyField) error {
	f, ok := fieldByName(wc.fields, bf.Name)
	if !ok {
		return core.Invalid(clip(bf.Name), "unknown field")
	}
	raw := bf.Value
	if len(bf.IDs) > 0 {
		if !f.IsPicklist() {
			// Only a picklist's read has ids; elsewhere they would be dropped, and the field cleared.
			return core.Invalid(f.Name(), "a "+string(f.Type)+" value is text, not <value id=\"..\"> or nested <value>s")
		}
		raw = strings.Join(bf.IDs, ",")
	}
	create := wc.stored == nil
	var old string
	if !create {
		old = wc.stored.Values[f.ID]
	}
	if f.Type == core.TypeTextarea && wc.version < 2 {
		text := raw
		var same bool
		if raw, same = textareaValue(text, old); same && !create {
			return nil
		}
		// max_size counts the characters the client wrote, not those of the HTML they are stored as (an & is
		// five of them there): a version-1 caller sees and sends text only.
		if f.MaxSize > 0 && utf8.RuneCountInString(text) > f.MaxSize {
			return core.Invalid(f.Name(), "longer than max_size "+strconv.Itoa(f.MaxSize))
		}
		f.MaxSize = 0
	}
	if !create && unchanged(f, raw, old) {
		return nil
	}
	v, err := core.Canonical(f, raw, wc.isUser)
	if err != nil {
		return err
	}
	if strings.TrimSpace(v) == "" && f.Required {
		return core.Invalid(f.Name(), "is required and cannot be empty")
	}
	wc.out.values[f.ID] = v
	return nil
}

// checkID accepts the id only in an update and only as the id of the record addressed.
func checkID(bf bodyField, stored *core.Record) error {
	if stored == nil {
		return core.Invalid("id", "the id is assigned by the system; do not send it on create")
	}
	if id, ok := parseID(strings.TrimSpace(bf.Value)); !ok || id != stored.ID {
		return core.Invalid("id", "does not match the record addressed")
	}
	return nil
}

// textareaValue is the HTML a version-1 write of a Textarea stores: the text as HTML (textHTML), so that no
// version-1 caller can inject markup, which version 2 reads would otherwise show as such. same reports that
// text is the version-1 read of old, the stored HTML: a record read sent back keeps its formatting.
func textareaValue(text, old string) (html string, same bool) {
	if text == plainText(old) {
		return old, true
	}
	return textHTML(text), false
}

// checkSystemField accepts a system field (version_number, created_time, ...) only in an update and only with
// the stored value, as a record read sent back carries it.
func checkSystemField(bf bodyField, stored *core.Record) error {
	if stored == nil {
		return core.Invalid(bf.Name, "is set by the system and cannot be written")
	}
	want := systemFields[bf.Name](*stored)
	if n, err := strconv.ParseInt(strings.TrimSpace(bf.Value), 10, 64); err != nil || n != want {
		return core.Invalid(bf.Name, "is set by the system and cannot be changed (the record has "+
			strconv.FormatInt(want, 10)+", not "+clip(strings.TrimSpace(bf.Value))+")")
	}
	return nil
}

// unchanged reports whether raw, a value as a write sends it, is the stored canonical value in the shape a
// record read gives it: the text as it is for text fields, trimmed for the others, picklist choices in
// any order.
func unchanged(f core.Field, raw, stored string) bool {
	switch f.Type {
	case core.TypeTextbox, core.TypeTextarea, core.TypeText:
		return raw == stored
	case core.TypePickMultiple:
		ids, ok := parseIDList(raw)
		return ok && ids == stored
	}
	return strings.TrimSpace(raw) == stored
}

// parseIDList reads a comma-separated list of integers into the canonical form of a multiple picklist
// (ascending, no duplicates); ok is false when an element is not an integer or is empty (1,,3: a list
// written wrong, which core.Canonical refuses, is never the stored value unchanged). An empty list is "".
func parseIDList(raw string) (string, bool) {
	if strings.TrimSpace(raw) == "" {
		return "", true
	}
	var ids []int64
	for part := range strings.SplitSeq(raw, ",") {
		if part = strings.TrimSpace(part); part == "" {
			return "", false
		}
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return "", false
		}
		ids = append(ids, n)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	parts := make([]string, len(ids))
	for i, n := range ids {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ","), true
}

// fieldByName finds field_<n> among fields.
func fieldByName(fields []core.Field, name string) (core.Field, bool) {
	n, ok := strings.CutPrefix(name, "field_")
	if !ok {
		return core.Field{}, false
	}
	id, ok := parseID(n)
	if !ok {
		return core.Field{}, false
	}
	for _, f := range fields {
		if f.ID == id {
			return f, true
		}
	}
	return core.Field{}, false
}
