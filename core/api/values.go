package api

import (
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// readOnlyFields are the system fields of a record read that a write may not set.
var readOnlyFields = map[string]bool{
	"version_number":    true,
	"created_time":      true,
	"last_updated_time": true,
	"created_by":        true,
	"last_updated_by":   true,
}

// writeValues is a validated record write.
type writeValues struct {
	values  map[int64]string // field id -> canonical value
	comment *string          // version_comment, when sent
}

// checkWrite validates the fields of a write body against the kind's fields. On create (pathID 0) the id
// field may not be sent and every required field must be; absent fields get their default. On update the
// id field may be sent only with the record's own id, and a required field may not be cleared. Errors are
// *core.ValidationError naming the field.
func checkWrite(body []bodyField, fields []core.Field, sc *schema, pathID int64) (writeValues, error) {
	create := pathID == 0
	out := writeValues{values: make(map[int64]string, len(body))}
	seen := make(map[string]bool, len(body))
	isUser := func(id int64) bool {
		u, ok := sc.user(id)
		return ok && !u.Deleted
	}
	for _, bf := range body {
		if seen[bf.Name] {
			return out, core.Invalid(bf.Name, "sent more than once")
		}
		seen[bf.Name] = true
		switch {
		case bf.Name == "id":
			if create {
				return out, core.Invalid("id", "the id is assigned by the system; do not send it on create")
			}
			if id, ok := parseID(strings.TrimSpace(bf.Value)); !ok || id != pathID {
				return out, core.Invalid("id", "does not match the record addressed")
			}
		case bf.Name == "version_comment":
			c := bf.Value
			if len(c) > 30000 {
				return out, core.Invalid("version_comment", "longer than max_size 30000")
			}
			out.comment = &c
		case readOnlyFields[bf.Name]:
			return out, core.Invalid(bf.Name, "is set by the system and cannot be written")
		default:
			f, ok := fieldByName(fields, bf.Name)
			if !ok {
				return out, core.Invalid(clip(bf.Name), "unknown field")
			}
			raw := bf.Value
			if f.IsPicklist() && len(bf.IDs) > 0 {
				raw = strings.Join(bf.IDs, ",")
			}
			v, err := core.Canonical(f, raw, isUser)
			if err != nil {
				return out, err
			}
			if strings.TrimSpace(v) == "" && f.Required {
				return out, core.Invalid(f.Name(), "is required and cannot be empty")
			}
			out.values[f.ID] = v
		}
	}
	if !create {
		if len(body) == 0 {
			return out, core.Invalid("", "the body names no field to update")
		}
		return out, nil
	}
	for _, f := range fields {
		if _, ok := out.values[f.ID]; ok {
			continue
		}
		if f.Required {
			return out, core.Invalid(f.Name(), "is required")
		}
		if d := defaultValue(f, isUser); d != "" {
			out.values[f.ID] = d
		}
	}
	return out, nil
}

// defaultValue is the value a field gets on create when the body leaves it out: its default_value, or its
// default picklist options. A default that does not validate is ignored.
func defaultValue(f core.Field, isUser func(int64) bool) string {
	raw := f.DefaultValue
	if raw == "" && f.IsPicklist() {
		var ids []string
		for _, o := range f.Options {
			if o.Default {
				ids = append(ids, strconv.FormatInt(o.Value, 10))
				if f.Type == core.TypePickOne {
					break
				}
			}
		}
		raw = strings.Join(ids, ",")
	}
	if raw == "" {
		return ""
	}
	v, err := core.Canonical(f, raw, isUser)
	if err != nil {
		return ""
	}
	return v
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
