package accounts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reqgate/reqgate/core"
	"gopkg.in/yaml.v3"
)

// rawField is a field definition as decoded, with where it was written.
type rawField struct {
	w where
	f core.Field
}

var (
	fieldKeys  = []string{"id", "label", "type", "special_purpose", "required", "sort", "help", "default_value", "max_size", "list_type", "options"}
	optionKeys = []string{"value", "label", "desc", "sort", "default"}

	// fieldTypes are the types of the contract, in its order.
	fieldTypes = []string{
		string(core.TypeInteger), string(core.TypeTextbox), string(core.TypeTextarea), string(core.TypePickOne),
		string(core.TypePickMultiple), string(core.TypeText), string(core.TypeEmail), string(core.TypeURL),
		string(core.TypeNumber), string(core.TypeDate), string(core.TypeCheckbox),
	}
	specialPurposes = []string{"id", "title", "desc", "product", "tags", "status", "owner"}
)

// Default max_size by type, as the interface's sample field list shows them.
const (
	textboxMaxSize  = 255
	textareaMaxSize = 30000
	maxMaxSize      = 1_000_000
)

// fields decodes the field list of one kind (a built-in kind or a custom object's api_prefix). A refused field
// is left out and its refusal added to r.errs.
func (r *reader) fields(items []*yaml.Node, kind string) []rawField {
	out := make([]rawField, 0, len(items))
	purposes := map[string]pos{}
	labels := map[string]pos{}
	for i, it := range items {
		f, err := r.field(it, kind, i)
		if err != nil {
			if r.skip(err) {
				break
			}
			continue
		}
		if sp := f.f.SpecialPurpose; sp != "" {
			if first, dup := purposes[sp]; dup {
				if r.skip(f.w.of("special_purpose").errorf("special_purpose %q is already used in %s by the field at line %d", sp, kind, first.line)) {
					break
				}
				continue
			}
			purposes[sp] = f.w.of("special_purpose")
		}
		// Applying matches a field without id by its label, so labels must tell the fields of a kind apart.
		l := strings.ToLower(strings.TrimSpace(f.f.Label))
		if first, dup := labels[l]; dup {
			if r.skip(f.w.of("label").errorf("label %q is already used in %s by the field at line %d", clip(f.f.Label), kind, first.line)) {
				break
			}
			continue
		}
		labels[l] = f.w.of("label")
		out = append(out, f)
	}
	return out
}

func (r *reader) field(n *yaml.Node, kind string, index int) (rawField, error) {
	o, err := r.object(n, "field", fieldKeys)
	if err != nil {
		return rawField{}, err
	}
	rf := rawField{w: o.where()}
	f := &rf.f
	f.Kind = kind
	if f.ID, _, err = o.int("id", 1, maxID); err != nil {
		return rf, err
	}
	if f.Label, err = o.required("label", 255); err != nil {
		return rf, err
	}
	if f.Type, err = fieldType(o); err != nil {
		return rf, err
	}
	if f.SpecialPurpose, err = o.text("special_purpose", 32, false); err != nil {
		return rf, err
	}
	if f.Required, err = o.bool("required"); err != nil {
		return rf, err
	}
	sort, ok, err := o.int("sort", 0, maxSort)
	if err != nil {
		return rf, err
	}
	if !ok {
		sort = int64(index + 1)
	}
	f.Sort = int(sort)
	if f.Help, err = o.text("help", maxText, true); err != nil {
		return rf, err
	}
	if f.DefaultValue, err = o.text("default_value", maxText, true); err != nil { // checked in build.go
		return rf, err
	}
	if err := maxSize(o, f); err != nil {
		return rf, err
	}
	if err := r.list(o, f); err != nil {
		return rf, err
	}
	if err := checkPurpose(f); err != nil {
		return rf, o.pos("special_purpose").errorf("%v", err)
	}
	return rf, nil
}

// fieldType reads a field's type in the spelling of the contract, whatever the case: "textbox" is Textbox.
func fieldType(o *object) (core.FieldType, error) {
	typ, err := o.required("type", 64)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(fieldTypes, func(t string) bool { return strings.EqualFold(t, strings.TrimSpace(typ)) })
	if i < 0 {
		return "", o.pos("type").errorf("type %q is not a field type; use one of %s", clip(typ), quoteList(fieldTypes))
	}
	return core.FieldType(fieldTypes[i]), nil
}

// maxSize reads a field's max_size; text fields without one get the size of the mirrored service.
func maxSize(o *object, f *core.Field) error {
	size, ok, err := o.int("max_size", 0, maxMaxSize)
	switch {
	case err != nil:
		return err
	case ok:
		f.MaxSize = int(size)
	case f.Type == core.TypeTextbox:
		f.MaxSize = textboxMaxSize
	case f.Type == core.TypeTextarea:
		f.MaxSize = textareaMaxSize
	}
	return nil
}

// list reads what a picklist chooses from: its list_type and, for a normal list, its options. Other fields
// take neither.
func (r *reader) list(o *object, f *core.Field) error {
	lt, err := o.text("list_type", 16, false)
	if err != nil {
		return err
	}
	switch {
	case !f.IsPicklist() && lt != "":
		return o.pos("list_type").errorf("list_type is for picklists only, and %q is a %s field", clip(f.Label), f.Type)
	case !f.IsPicklist() && o.has("options"):
		return o.pos("options").errorf("options are for picklists only, and %q is a %s field", clip(f.Label), f.Type)
	case !f.IsPicklist():
	case lt == "" || lt == core.ListNormal:
		f.ListType = core.ListNormal
		f.Options, err = r.options(o, f)
		return err
	case lt == core.ListUser:
		f.ListType = core.ListUser
		if o.has("options") {
			return o.pos("options").errorf("a user picklist takes no options: its values are the account's users")
		}
	default:
		return o.pos("list_type").errorf("list_type %q is not normal or user", clip(lt))
	}
	return nil
}

// checkPurpose refuses a special purpose the field's type cannot serve: the interface shows the title field
// as a record's title, and status, product, tags and owner are picklists in the mirrored service.
func checkPurpose(f *core.Field) error {
	sp := f.SpecialPurpose
	if sp == "" {
		return nil
	}
	need, known := purposes[sp]
	if !known {
		return fmt.Errorf("special_purpose %q is not one of %s", clip(sp), quoteList(specialPurposes))
	}
	if !need.ok(f) {
		return fmt.Errorf("special_purpose %s needs a field of type %s, not %s", sp, need.want, f.Type)
	}
	return nil
}

// purposes are the field types each special purpose takes: ok checks a field, want names them.
var purposes = map[string]struct {
	ok   func(f *core.Field) bool
	want string
}{
	"id":      {func(f *core.Field) bool { return isType(f, core.TypeInteger, core.TypeTextbox, core.TypeText) }, "Number-Integer, Textbox or Text"},
	"title":   {func(f *core.Field) bool { return isType(f, core.TypeTextbox, core.TypeText) }, "Textbox or Text"},
	"desc":    {func(f *core.Field) bool { return isType(f, core.TypeTextarea, core.TypeTextbox, core.TypeText) }, "Textarea, Textbox or Text"},
	"status":  {pickOneWithOptions, "Picklist-Pick One with options"},
	"product": {pickOneWithOptions, "Picklist-Pick One with options"},
	"tags":    {func(f *core.Field) bool { return f.IsPicklist() && f.ListType == core.ListNormal }, "a picklist with options"},
	"owner":   {func(f *core.Field) bool { return f.IsPicklist() && f.ListType == core.ListUser }, "a picklist with list_type user"},
}

func isType(f *core.Field, types ...core.FieldType) bool { return slices.Contains(types, f.Type) }

func pickOneWithOptions(f *core.Field) bool {
	return f.Type == core.TypePickOne && f.ListType == core.ListNormal
}

// options decodes the options of a normal picklist: at least one, unique values and labels, and at most one
// default for a single-choice list.
func (r *reader) options(o *object, f *core.Field) ([]core.Option, error) {
	items, err := o.list("options")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, o.pos("options").errorf("picklist %q needs options (or list_type: user for a picklist of users)", clip(f.Label))
	}
	opts := make([]core.Option, 0, len(items))
	seen := optionsSeen{values: map[int64]int{}, labels: map[string]int{}}
	for i, it := range items {
		opt, err := r.option(it, i, f, &seen)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
	}
	return opts, nil
}

// optionsSeen are the values and labels (lower case) of a picklist's options read so far, with their lines,
// and how many were the default.
type optionsSeen struct {
	values   map[int64]int
	labels   map[string]int
	defaults int
}

// option reads the option at index i of picklist f.
func (r *reader) option(it *yaml.Node, i int, f *core.Field, seen *optionsSeen) (core.Option, error) {
	var opt core.Option
	oo, err := r.object(it, "option", optionKeys)
	if err != nil {
		return opt, err
	}
	v, ok, err := oo.int("value", 0, maxID)
	if err != nil {
		return opt, err
	}
	if !ok {
		return opt, oo.pos("value").errorf("option: value is required (the integer a record stores)")
	}
	opt.Value = v
	if first, dup := seen.values[v]; dup {
		return opt, oo.pos("value").errorf("option value %d is already used in %q at line %d", v, clip(f.Label), first)
	}
	seen.values[v] = oo.pos("value").line
	if opt.Label, err = oo.required("label", 255); err != nil {
		return opt, err
	}
	l := strings.ToLower(strings.TrimSpace(opt.Label))
	if first, dup := seen.labels[l]; dup {
		return opt, oo.pos("label").errorf("option label %q is already used in %q at line %d", clip(opt.Label), clip(f.Label), first)
	}
	seen.labels[l] = oo.pos("label").line
	if opt.Desc, err = oo.text("desc", maxText, true); err != nil {
		return opt, err
	}
	s, ok, err := oo.int("sort", 0, maxSort)
	if err != nil {
		return opt, err
	}
	if !ok {
		s = int64(i + 1)
	}
	opt.Sort = int(s)
	return opt, optionDefault(oo, &opt, f, seen)
}

// optionDefault reads whether the option is the default; a single-choice picklist has at most one.
func optionDefault(oo *object, opt *core.Option, f *core.Field, seen *optionsSeen) error {
	var err error
	if opt.Default, err = oo.bool("default"); err != nil || !opt.Default {
		return err
	}
	seen.defaults++
	if seen.defaults > 1 && f.Type == core.TypePickOne {
		return oo.pos("default").errorf("picklist %q chooses one value, so only one option may be the default", clip(f.Label))
	}
	return nil
}

// templateSize is the width of the id block a standard template takes: ids base+1 .. base+6.
const templateSize = 6

// standardTemplate returns the standard fields of a built-in kind (contract: "The standard template") with
// ids base+1 .. base+6 and sort 1 .. 6.
func standardTemplate(kind string, base int64) []core.Field {
	return []core.Field{
		{ID: base + 1, Kind: kind, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title", Required: true, Sort: 1, MaxSize: textboxMaxSize},
		{ID: base + 2, Kind: kind, Label: "Description", Type: core.TypeTextarea, SpecialPurpose: "desc", Sort: 2, MaxSize: textareaMaxSize},
		{ID: base + 3, Kind: kind, Label: "Status", Type: core.TypePickOne, SpecialPurpose: "status", Sort: 3, ListType: core.ListNormal,
			Options: []core.Option{
				{Value: 1, Label: "Pending Review", Sort: 1, Default: true},
				{Value: 2, Label: "Accepted - Scheduled", Sort: 2},
				{Value: 3, Label: "Accepted - Unscheduled", Sort: 3},
			}},
		{ID: base + 4, Kind: kind, Label: "Owner", Type: core.TypePickOne, SpecialPurpose: "owner", Sort: 4, ListType: core.ListUser},
		{ID: base + 5, Kind: kind, Label: "Product", Type: core.TypePickOne, SpecialPurpose: "product", Sort: 5, ListType: core.ListNormal,
			Options: []core.Option{
				{Value: 1, Label: "Platform", Sort: 1},
				{Value: 2, Label: "Web App", Sort: 2},
				{Value: 3, Label: "Mobile App", Sort: 3},
			}},
		{ID: base + 6, Kind: kind, Label: "Tags", Type: core.TypePickMultiple, SpecialPurpose: "tags", Sort: 6, ListType: core.ListNormal,
			Options: []core.Option{
				{Value: 1, Label: "Customer Request", Sort: 1},
				{Value: 2, Label: "Performance", Sort: 2},
				{Value: 3, Label: "Security", Sort: 3},
				{Value: 4, Label: "Usability", Sort: 4},
			}},
	}
}
