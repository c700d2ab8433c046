package accounts

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"slices"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// merge joins the accounts of every file (and repeated entries of one file) that share an api_key into one,
// in order of first appearance: lists are concatenated, so the uniqueness rules of build then apply across
// files. A name given twice must agree, and the fields of a built-in kind come from one place only; a
// refusal is added to errs, the entry left out and its api_key added to refused.
func merge(all []*rawAccount, errs *errList, refused map[string]bool) []*rawAccount {
	byKey := map[string]*rawAccount{}
	var out []*rawAccount
	for _, a := range all {
		m, seen := byKey[a.apiKey]
		if !seen {
			c := *a
			c.kinds = make(map[string]*rawKind, len(a.kinds))
			for k, v := range a.kinds {
				c.kinds[k] = v
			}
			byKey[a.apiKey] = &c
			out = append(out, &c)
			continue
		}
		if a.name != "" {
			if m.name != "" && m.name != a.name {
				errs.add(a.w.of("name").errorf("account %q is named %q at %s; a second entry may repeat the name, not change it", a.apiKey, clip(m.name), m.w.of("name")))
				refused[a.apiKey] = true
				continue
			}
			if m.name == "" {
				m.name, m.w.keys["name"] = a.name, a.w.of("name")
			}
		}
		refusedKind := false
		for _, kind := range core.BuiltinKinds {
			k, ok := a.kinds[kind]
			if !ok {
				continue
			}
			if first, dup := m.kinds[kind]; dup {
				errs.add(k.at.errorf("fields of %s for account %q are already given at %s", kind, a.apiKey, first.at))
				refusedKind = true
				continue
			}
			m.kinds[kind] = k
		}
		if refusedKind {
			refused[a.apiKey] = true
			continue
		}
		m.users = append(m.users, a.users...)
		m.objects = append(m.objects, a.objects...)
		m.views = append(m.views, a.views...)
		m.records = append(m.records, a.records...)
		m.rels = append(m.rels, a.rels...)
	}
	for _, a := range out {
		if strings.TrimSpace(a.name) == "" {
			a.name = a.apiKey
		}
	}
	return out
}

// account holds what build learns about one merged account while it checks it.
type account struct {
	raw       *rawAccount
	spec      core.AccountSpec
	passwords []string         // parallel to spec.Users
	userID    map[string]int64 // username -> id given in the file (0: assigned by the store)
	userIDs   map[int64]bool   // ids given in the file
	fields    map[string][]core.Field
	kindOf    map[string]string // id prefix (RE, FT, UC, RSK) -> kind
	errs      *errList
}

// refuse records the refusal of one item of the account; the step goes on with the next item unless it
// reports that checking should stop.
func (a *account) refuse(err error) bool {
	a.errs.add(err)
	return a.errs.stop()
}

func (a *account) isUser(id int64) bool { return a.userIDs[id] }

// build checks one merged account and turns it into its AccountSpec (passwords not yet hashed), adding its
// refusals to errs. Each step checks all of its items, but a step runs only when the ones before it passed,
// since it relies on what they established (users for creators, fields for values).
func build(raw *rawAccount, errs *errList) *account {
	a := &account{
		raw:     raw,
		spec:    core.AccountSpec{APIKey: raw.apiKey, Name: raw.name, Fields: map[string][]core.Field{}},
		userID:  map[string]int64{},
		userIDs: map[int64]bool{},
		fields:  map[string][]core.Field{},
		kindOf:  map[string]string{"RE": core.KindRequirement, "FT": core.KindFeature, "UC": core.KindUseCase},
		errs:    errs,
	}
	before := errs.len()
	steps := []func(){a.users, a.objects, a.fieldIDs, a.defaults, a.views, a.records, a.relationships}
	for _, step := range steps {
		if step(); errs.len() > before || errs.stop() {
			break
		}
	}
	return a
}

func (a *account) users() {
	byName := map[string]pos{}
	byID := map[int64]pos{}
	for _, u := range a.raw.users {
		at := u.w.of("username")
		if first, dup := byName[u.user.Username]; dup {
			if a.refuse(at.errorf("username %q is already used in account %q at %s", clip(u.user.Username), a.spec.APIKey, first)) {
				return
			}
			continue
		}
		byName[u.user.Username] = at
		if id := u.user.ID; id != 0 {
			if first, dup := byID[id]; dup {
				if a.refuse(u.w.of("id").errorf("user id %d is already used in account %q at %s", id, a.spec.APIKey, first)) {
					return
				}
				continue
			}
			byID[id] = u.w.of("id")
			a.userIDs[id] = true
		}
		a.userID[u.user.Username] = u.user.ID
		a.spec.Users = append(a.spec.Users, core.UserSpec{User: u.user})
		a.passwords = append(a.passwords, u.password)
	}
}

func (a *account) objects() {
	prefixes := map[string]pos{}
	idPrefixes := map[string]pos{}
	for _, o := range a.raw.objects {
		at := o.w.of("api_prefix")
		if first, dup := prefixes[o.obj.APIPrefix]; dup {
			if a.refuse(at.errorf("api_prefix %q is already used in account %q at %s", o.obj.APIPrefix, a.spec.APIKey, first)) {
				return
			}
			continue
		}
		prefixes[o.obj.APIPrefix] = at
		if first, dup := idPrefixes[o.obj.IDPrefix]; dup {
			if a.refuse(o.w.of("id_prefix").errorf("id_prefix %q is already used in account %q at %s", o.obj.IDPrefix, a.spec.APIKey, first)) {
				return
			}
			continue
		}
		idPrefixes[o.obj.IDPrefix] = o.w.of("id_prefix")
		a.kindOf[o.obj.IDPrefix] = o.obj.APIPrefix
		obj := o.obj
		obj.UniqueID = uniqueID(a.spec.APIKey, obj.APIPrefix)
		fs := make([]core.Field, len(o.fields))
		for i, f := range o.fields {
			fs[i] = f.f
		}
		a.fields[obj.APIPrefix] = fs
		a.spec.Objects = append(a.spec.Objects, core.ObjectSpec{Object: obj, Fields: fs})
	}
}

// uniqueID is a custom object's object_unique_id: opaque, URL-safe and stable, since it derives from the
// account and the api_prefix alone.
func uniqueID(apiKey, apiPrefix string) string {
	sum := sha256.Sum256([]byte("reqgate/object/" + apiKey + "/" + apiPrefix))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// fieldIDs checks that explicit field ids are unique across the account, then gives every built-in kind the
// file leaves out the standard template. Its ids are 101-106 (re), 201-206 (ft), 301-306 (uc); when an
// explicit field already uses an id of that block, the kind takes the first free block of 401-406, 501-506...
func (a *account) fieldIDs() {
	used := map[int64]pos{}
	if a.claimIDs(used) {
		return
	}
	a.templates(used)
}

// claimIDs records the explicit field ids of the account in used, refusing one used twice; it reports whether
// reading must stop.
func (a *account) claimIDs(used map[int64]pos) (stop bool) {
	claim := func(fs []rawField) (stop bool) {
		for _, f := range fs {
			if f.f.ID == 0 {
				continue
			}
			if first, dup := used[f.f.ID]; dup {
				if a.refuse(f.w.of("id").errorf("field id %d is already used in account %q at %s (field ids are unique across kinds and custom objects)", f.f.ID, a.spec.APIKey, first)) {
					return true
				}
				continue
			}
			used[f.f.ID] = f.w.of("id")
		}
		return false
	}
	for _, kind := range core.BuiltinKinds {
		if k, ok := a.raw.kinds[kind]; ok && claim(k.fields) {
			return true
		}
	}
	for _, o := range a.raw.objects {
		if claim(o.fields) {
			return true
		}
	}
	return false
}

// templates sets the fields of each built-in kind: the file's, or else the standard template in the first
// free block of ids, which it then marks used.
func (a *account) templates(used map[int64]pos) {
	free := func(base int64) bool {
		for id := base + 1; id <= base+templateSize; id++ {
			if _, taken := used[id]; taken {
				return false
			}
		}
		return true
	}
	for i, kind := range core.BuiltinKinds {
		if k, ok := a.raw.kinds[kind]; ok {
			fs := make([]core.Field, len(k.fields))
			for j, f := range k.fields {
				fs[j] = f.f
			}
			a.fields[kind], a.spec.Fields[kind] = fs, fs
			continue
		}
		base := int64(i+1) * 100
		if !free(base) {
			for base = 400; !free(base); base += 100 {
			}
		}
		for id := base + 1; id <= base+templateSize; id++ {
			used[id] = a.raw.w.item
		}
		fs := standardTemplate(kind, base)
		a.fields[kind], a.spec.Fields[kind] = fs, fs
	}
}

// defaults checks every field's default_value as a value of that field.
func (a *account) defaults() {
	check := func(fs []rawField) (stop bool) {
		for _, f := range fs {
			if f.f.DefaultValue == "" {
				continue
			}
			if _, err := core.Canonical(f.f, f.f.DefaultValue, a.isUser); err != nil {
				if a.refuse(f.w.of("default_value").errorf("default_value of %q: %s", clip(f.f.Label), reason(err))) {
					return true
				}
			}
		}
		return false
	}
	for _, kind := range core.BuiltinKinds {
		if k, ok := a.raw.kinds[kind]; ok && check(k.fields) {
			return
		}
	}
	for _, o := range a.raw.objects {
		if check(o.fields) {
			return
		}
	}
}

// reason is the text of a core validation error without the field name it repeats.
func reason(err error) string {
	if ve, ok := errors.AsType[*core.ValidationError](err); ok {
		return ve.Reason
	}
	return err.Error()
}

func (a *account) knownKind(kind string) bool { _, ok := a.fields[kind]; return ok }

func (a *account) kinds() string {
	ks := slices.Clone(core.BuiltinKinds)
	for _, o := range a.spec.Objects {
		ks = append(ks, o.APIPrefix)
	}
	return strings.Join(ks, ", ")
}

func (a *account) views() {
	ids := map[int64]pos{}
	for _, v := range a.raw.views {
		if first, dup := ids[v.view.ID]; dup {
			if a.refuse(v.w.of("id").errorf("view id %d is already used in account %q at %s", v.view.ID, a.spec.APIKey, first)) {
				return
			}
			continue
		}
		ids[v.view.ID] = v.w.of("id")
		if !a.knownKind(v.view.Kind) {
			if a.refuse(v.w.of("kind").errorf("view kind %q is not a kind of account %q (%s)", clip(v.view.Kind), a.spec.APIKey, a.kinds())) {
				return
			}
			continue
		}
		if err := a.creator(&v.createdBy, v.w); err != nil {
			if a.refuse(err) {
				return
			}
			continue
		}
		conds, err := core.ParseConditions(v.view.Conditions)
		if err == nil {
			err = core.CheckConditions(conds, a.fields[v.view.Kind])
		}
		for _, c := range conds {
			if err == nil && c.Attr == "deleted_time" {
				// A view lists live records (docs/api.md, Views); deleted ones are found by a search.
				err = core.Invalid(c.String(), "a view lists live records, so its conditions take no deleted_time")
			}
		}
		if err != nil {
			if a.refuse(v.w.of("conditions").errorf("conditions: %v", err)) {
				return
			}
			continue
		}
		a.spec.Views = append(a.spec.Views, core.ViewSpec{View: v.view, CreatedByUsername: v.createdBy})
	}
}
