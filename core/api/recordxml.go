package api

import (
	"strconv"

	"github.com/reqgate/reqgate/core"
)

// writeRecord writes one record read: <root><fields><field>...</field>...</fields></root>. Field order:
// id, the account fields by sort, then version_number, created_time, last_updated_time and, for the
// built-in kinds only, created_by, last_updated_by, version_comment. Inside a field: name, label, value,
// prefix (id) or value_plaintext (Textarea, version 2), list_type (picklists), sort. The id field carries
// <sort>0</sort> (docs/api.md, Record read); the other system fields an empty <sort />.
func writeRecord(x *xmlw, version int, obj core.Object, fields []core.Field, sc *schema, rec core.Record) {
	root := obj.RootElement()
	x.open(root)
	x.open("fields")

	x.open("field")
	x.elem("name", "id")
	x.elem("label", "ID")
	x.elemInt("value", rec.ID)
	x.elem("prefix", obj.WirePrefix())
	x.elemInt("sort", 0)
	x.close("field")

	for _, f := range fields {
		x.open("field")
		x.elem("name", f.Name())
		x.elem("label", f.Label)
		v := rec.Values[f.ID]
		writeValue(x, "value", version, f, sc, v)
		if f.Type == core.TypeTextarea && version >= 2 {
			x.elem("value_plaintext", plainText(v))
		}
		if f.IsPicklist() {
			x.elem("list_type", listType(f))
		}
		x.elemInt("sort", int64(f.Sort))
		x.close("field")
	}

	systemInt(x, "version_number", "Version Number (Auto-generated)", rec.Version)
	systemInt(x, "created_time", "Created Time (GMT Timestamp)", rec.CreatedTime)
	systemInt(x, "last_updated_time", "Last Updated Time (GMT Timestamp)", rec.LastUpdatedTime)
	if !obj.Custom {
		systemInt(x, "created_by", "Created By", rec.CreatedBy)
		systemInt(x, "last_updated_by", "Last Updated By", rec.LastUpdatedBy)
		x.open("field")
		x.elem("name", "version_comment")
		x.elem("label", "Version Comment")
		x.elem("value", rec.VersionComment)
		x.empty("sort")
		x.close("field")
	}

	x.close("fields")
	x.close(root)
}

func systemInt(x *xmlw, name, label string, v int64) {
	x.open("field")
	x.elem("name", name)
	x.elem("label", label)
	x.elemInt("value", v)
	x.empty("sort")
	x.close("field")
}

// listType is the <list_type> of a picklist: user or normal.
func listType(f core.Field) string {
	if f.ListType == core.ListUser {
		return core.ListUser
	}
	return core.ListNormal
}

// writeValue writes the element name (value, old_value, new_value) holding the canonical value v of field
// f as the interface shows it:
//   - Picklist - Pick One: <name id="3">Label</name>; a user picklist adds email and shows the display name.
//   - Picklist - Pick Multiple: one child <value id="..">label</value> per option (with email for users).
//   - Textarea: HTML in CDATA in version 2; its plain text, not CDATA, in version 1.
//   - anything else: the text.
//
// An empty value is <name />.
func writeValue(x *xmlw, name string, version int, f core.Field, sc *schema, v string) {
	switch {
	case v == "":
		if f.Type == core.TypeTextarea && version >= 2 {
			x.elemCDATA(name, "")
			return
		}
		x.empty(name)
	case f.Type == core.TypePickOne:
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			x.elem(name, v)
			return
		}
		writeChoice(x, name, f, sc, id)
	case f.Type == core.TypePickMultiple:
		x.open(name)
		for _, id := range core.SplitIDs(v) {
			writeChoice(x, "value", f, sc, id)
		}
		x.close(name)
	case f.Type == core.TypeTextarea:
		if version >= 2 {
			x.elemCDATA(name, v)
		} else {
			x.elem(name, plainText(v))
		}
	default:
		x.elem(name, v)
	}
}

// writeChoice writes one picklist choice: <name id="n">label</name>, or for a user picklist
// <name id="n" email="..">First Last</name>. An option or user that no longer exists shows its id only.
func writeChoice(x *xmlw, name string, f core.Field, sc *schema, id int64) {
	ids := strconv.FormatInt(id, 10)
	if f.ListType == core.ListUser {
		if u, ok := sc.user(id); ok {
			x.elemAttrs(name, u.DisplayName(), "id", ids, "email", u.Email)
			return
		}
		x.elemAttrs(name, "", "id", ids)
		return
	}
	o, _ := f.Option(id)
	x.elemAttrs(name, o.Label, "id", ids)
}

// writeFieldList writes the field-definition list of a kind: the id field first (max_size 15, special
// purpose id), then every field with every element of docs/api.md (Field definitions), in its order.
// Picklists carry <list_type> too; a user picklist has exactly one option, labelled {{USERS}}.
func writeFieldList(x *xmlw, obj core.Object, fields []core.Field) {
	root := obj.FieldsElement()
	x.open(root)
	x.open("fields")

	x.open("field")
	x.elem("name", "id")
	x.elem("label", "ID")
	x.elem("type", string(core.TypeInteger))
	x.elemInt("sort", 0)
	x.empty("help")
	x.elemInt("required", 0)
	x.empty("default_value")
	x.elemInt("max_size", 15)
	x.elem("special_purpose", "id")
	x.close("field")

	for _, f := range fields {
		x.open("field")
		x.elemInt("id", f.ID)
		x.elem("name", f.Name())
		x.elem("label", f.Label)
		x.elem("type", string(f.Type))
		x.elemInt("sort", int64(f.Sort))
		x.elem("help", f.Help)
		x.elemInt("required", boolInt(f.Required))
		x.elem("default_value", f.DefaultValue)
		if f.MaxSize > 0 {
			x.elemInt("max_size", int64(f.MaxSize))
		} else {
			x.empty("max_size")
		}
		x.elem("special_purpose", f.SpecialPurpose)
		if f.IsPicklist() {
			x.elem("list_type", listType(f))
			x.open("picklist_options")
			if f.ListType == core.ListUser {
				x.open("option")
				x.empty("value")
				x.elem("label", "{{USERS}}")
				x.empty("desc")
				x.elemInt("option_sort", 0)
				x.elemInt("option_default", 0)
				x.close("option")
			} else {
				for _, o := range f.Options {
					x.open("option")
					x.elemInt("value", o.Value)
					x.elem("label", o.Label)
					x.elem("desc", o.Desc)
					x.elemInt("option_sort", int64(o.Sort))
					x.elemInt("option_default", boolInt(o.Default))
					x.close("option")
				}
			}
			x.close("picklist_options")
		}
		x.close("field")
	}

	x.close("fields")
	x.close(root)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
