package accounts

import (
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// recordKey names a seed record within its account.
type recordKey struct {
	kind string
	id   int64
}

// records checks the seed records, each of them (refusals go to a.errs): a known kind, a unique id per kind, a creator of the account, values that
// are valid for their fields (core.Canonical), and every required field given.
func (a *account) records() {
	seen := map[recordKey]pos{}
	for _, rec := range a.raw.records {
		if a.record(rec, seen) {
			return
		}
	}
}

// record checks one seed record and adds it to the spec; it reports whether reading must stop.
func (a *account) record(rec rawRecord, seen map[recordKey]pos) (stop bool) {
	if !a.knownKind(rec.kind) {
		return a.refuse(rec.w.of("kind").errorf("record kind %q is not a kind of account %q (%s)", clip(rec.kind), a.spec.APIKey, a.kinds()))
	}
	k := recordKey{rec.kind, rec.id}
	if first, dup := seen[k]; dup {
		return a.refuse(rec.w.of("id").errorf("record %s %d is already given at %s", rec.kind, rec.id, first))
	}
	seen[k] = rec.w.of("id")
	if err := a.creator(&rec.createdBy, rec.w); err != nil {
		return a.refuse(err)
	}
	fields := a.fields[rec.kind]
	values, refused, stop := a.recordValues(rec, fields)
	if stop || refused {
		return stop // after a refused value a required field may only seem missing
	}
	for _, f := range fields {
		if f.Required && values[f.ID] == "" &&
			a.refuse(rec.w.of("fields").errorf("record %s %d: required field %s (%s) has no value", rec.kind, rec.id, f.Name(), clip(f.Label))) {
			return true
		}
	}
	a.spec.Records = append(a.spec.Records, core.RecordSpec{
		Kind: rec.kind, ID: rec.id, CreatedByUsername: rec.createdBy, CreatedTime: rec.createdTime, Values: values,
	})
	return false
}

// recordValues checks the values of a seed record against the fields of its kind; refused reports that some
// value was refused, stop that reading must stop.
func (a *account) recordValues(rec rawRecord, fields []core.Field) (values map[int64]string, refused, stop bool) {
	values = make(map[int64]string, len(rec.values))
	for _, rv := range rec.values {
		f, ok := fieldNamed(fields, rv.name)
		if !ok {
			if a.refuse(rv.at.errorf("%s is not a field of %s", rv.name, rec.kind)) {
				return values, true, true
			}
			refused = true
			continue
		}
		v, err := a.value(f, rv)
		if err != nil {
			if a.refuse(err) {
				return values, true, true
			}
			refused = true
			continue
		}
		values[f.ID] = v
	}
	return values, refused, false
}

// fieldNamed finds the field called name (field_<n>) among fs.
func fieldNamed(fs []core.Field, name string) (core.Field, bool) {
	id, err := strconv.ParseInt(strings.TrimPrefix(name, "field_"), 10, 64)
	if err != nil || id == 0 {
		return core.Field{}, false
	}
	for _, f := range fs {
		if f.ID == id {
			return f, true
		}
	}
	return core.Field{}, false
}

// value turns one written value into its canonical stored form. A multiple picklist may be a YAML list or
// "1,3"; a user picklist takes user ids or usernames (of users whose id the file gives).
func (a *account) value(f core.Field, rv rawValue) (string, error) {
	if rv.isList && f.Type != core.TypePickMultiple {
		return "", rv.at.errorf("%s is a %s field; only Picklist-Pick Multiple takes a list", rv.name, f.Type)
	}
	text := strings.Join(rv.parts, ",")
	if f.ListType == core.ListUser {
		parts := strings.Split(text, ",")
		for i, p := range parts {
			p = strings.TrimSpace(p)
			if _, err := strconv.ParseInt(p, 10, 64); err == nil || p == "" {
				continue
			}
			id, ok := a.userID[p]
			if !ok {
				return "", rv.at.errorf("%s: %q is neither a user id nor a username of account %q", rv.name, clip(p), a.spec.APIKey)
			}
			if id == 0 {
				return "", rv.at.errorf("%s: user %q has no id in the file; give it one to name it in records", rv.name, clip(p))
			}
			parts[i] = strconv.FormatInt(id, 10)
		}
		text = strings.Join(parts, ",")
	}
	v, err := core.Canonical(f, text, a.isUser)
	if err != nil {
		return "", rv.at.errorf("%s (%s): %s", rv.name, clip(f.Label), reason(err))
	}
	return v, nil
}

// relationships checks the links: both ends name a kind of the account by its id prefix (RE-1, RSK-3), and
// one pair of records is linked once. An end need not be a seed record of the file (the contract's own
// example links RSK-3, which it does not seed): Store.Apply refuses a link to a record that does not exist.
func (a *account) relationships() {
	type pair struct{ a, b recordKey }
	linked := map[pair]pos{}
	for _, rel := range a.raw.rels {
		var ends [2]recordKey
		refused := false
		for i, side := range []struct {
			key string
			r   ref
		}{{"from", rel.from}, {"to", rel.to}} {
			kind, ok := a.kindOf[side.r.prefix]
			if !ok {
				if a.refuse(rel.w.of(side.key).errorf("%s %s: no kind of account %q has the id prefix %s", side.key, side.r, a.spec.APIKey, side.r.prefix)) {
					return
				}
				refused = true
				continue
			}
			ends[i] = recordKey{kind, side.r.id}
		}
		if refused {
			continue
		}
		p := pair{ends[0], ends[1]}
		if less(p.b, p.a) {
			p = pair{p.b, p.a}
		}
		if first, dup := linked[p]; dup {
			if a.refuse(rel.w.item.errorf("%s and %s are already linked at %s", rel.from, rel.to, first)) {
				return
			}
			continue
		}
		linked[p] = rel.w.item
		a.spec.Relationships = append(a.spec.Relationships, core.RelationshipSpec{
			FromKind: ends[0].kind, FromID: ends[0].id, ToKind: ends[1].kind, ToID: ends[1].id, Type: rel.typ,
		})
	}
}

func less(x, y recordKey) bool {
	if x.kind != y.kind {
		return x.kind < y.kind
	}
	return x.id < y.id
}

// creator checks the created_by of a view or record: a username of the account in the file. Left out, it is
// the account's first user in the file.
func (a *account) creator(username *string, w where) error {
	if *username == "" {
		if len(a.spec.Users) == 0 {
			return w.item.errorf("created_by is required: account %q has no users in the file to default to", a.spec.APIKey)
		}
		*username = a.spec.Users[0].Username
		return nil
	}
	if _, ok := a.userID[*username]; !ok {
		return w.of("created_by").errorf("created_by %q is not a user of account %q in the file", clip(*username), a.spec.APIKey)
	}
	return nil
}
