package accounts

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/internal/wire"
	"github.com/reqgate/reqgate/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// This file turns one file's YAML into raw items that still carry their positions. Checks that need only
// the item itself happen here; checks across items (uniqueness, references) happen in build.go, after the
// accounts of every file are merged.

type rawAccount struct {
	w       where
	apiKey  string
	name    string
	users   []rawUser
	kinds   map[string]*rawKind // built-in kind -> the fields the file gives for it
	objects []rawObject
	views   []rawView
	records []rawRecord
	rels    []rawRel
}

type rawKind struct {
	at     pos
	fields []rawField
}

type rawUser struct {
	w        where
	user     core.User
	password string
}

type rawObject struct {
	w      where
	obj    core.Object
	fields []rawField
}

type rawView struct {
	w         where
	view      core.View
	createdBy string
}

type rawRecord struct {
	w           where
	kind        string
	id          int64
	createdBy   string
	createdTime int64
	values      []rawValue
}

// rawValue is one field_<n> of a seed record as written: a single value or a list (multiple picklists).
type rawValue struct {
	name   string
	at     pos
	parts  []string
	isList bool
}

type rawRel struct {
	w        where
	from, to ref
	typ      string
}

// ref names a record in a relationship: an id prefix (RE, FT, UC or a custom object's) and an id.
type ref struct {
	prefix string
	id     int64
}

func (r ref) String() string { return r.prefix + "-" + strconv.FormatInt(r.id, 10) }

var (
	accountKeys = []string{"api_key", "name", "users", "fields", "custom_objects", "views", "records", "relationships"}
	userKeys    = []string{"id", "username", "password", "email", "firstname", "lastname", "status", "deleted"}
	objectKeys  = []string{"api_prefix", "name_singular", "name_plural", "id_prefix", "description", "fields"}
	viewKeys    = []string{"id", "kind", "name", "description", "created_by", "conditions"}
	recordKeys  = []string{"kind", "id", "created_by", "created_time", "fields"}
	relKeys     = []string{"from", "to", "type"}

	apiPrefixPattern = regexp.MustCompile(`^[a-z0-9]{1,32}$`)
	idPrefixPattern  = regexp.MustCompile(`^[A-Z][A-Z0-9]{0,9}$`)
	fieldNamePattern = regexp.MustCompile(`^field_([0-9]{1,9})$`)
	refPattern       = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]{0,9})-([0-9]{1,18})$`)
)

// Bounds of the integers of a file.
const (
	maxID   = 999_999_999
	maxSort = 1_000_000
	maxTime = 253_402_300_799 // 9999-12-31T23:59:59Z
)

// decodeFile reads the accounts of one file, adding the refusals to errs. An account that is refused is left
// out; so are the refused items of an account that is kept (errs then holds their refusals), and its api_key
// is added to refused. ok is false when the file itself was refused (not YAML, no accounts list): which
// accounts it meant to give is then unknown.
func decodeFile(name string, data []byte, errs *errList, refused map[string]bool) (accts []*rawAccount, ok bool) {
	r := &reader{file: name, errs: errs}
	doc, err := r.document(data)
	if err != nil {
		errs.add(err)
		return nil, false
	}
	if doc == nil {
		errs.add(pos{name, 1}.errorf("the file is empty; it needs a top-level accounts: list"))
		return nil, false
	}
	top, err := r.object(doc, "the file", []string{"accounts"})
	if err != nil {
		errs.add(err)
		return nil, false
	}
	items, err := top.list("accounts")
	if err != nil {
		errs.add(err)
		return nil, false
	}
	if len(items) == 0 {
		errs.add(top.pos("accounts").errorf("accounts: the file provisions no account"))
		return nil, false
	}
	accts = make([]*rawAccount, 0, len(items))
	for _, it := range items {
		if errs.stop() {
			break
		}
		before := errs.len()
		a, err := r.account(it)
		if err != nil {
			if k := apiKeyOf(it); k != "" {
				refused[k] = true
			}
			if r.skip(err) {
				break
			}
			continue
		}
		if errs.len() > before {
			refused[a.apiKey] = true
		}
		accts = append(accts, a)
	}
	return accts, true
}

// apiKeyOf is the api_key an account entry gives, as written, or "" when it gives none that can be read: for
// an entry refused as a whole, so that the rest of its account is not checked without it.
func apiKeyOf(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "api_key" && v.Kind == yaml.ScalarNode {
			return strings.TrimSpace(v.Value)
		}
	}
	return ""
}

func (r *reader) account(n *yaml.Node) (*rawAccount, error) {
	o, err := r.object(n, "account", accountKeys)
	if err != nil {
		return nil, err
	}
	a := &rawAccount{w: o.where(), kinds: map[string]*rawKind{}}
	if a.apiKey, err = o.required("api_key", 128); err != nil {
		return nil, err
	}
	if !wire.ValidAPIKey(a.apiKey) {
		return nil, o.pos("api_key").errorf("api_key %q may hold only letters, digits, '-' and '_'", clip(a.apiKey))
	}
	if a.name, err = o.text("name", 255, false); err != nil {
		return nil, err
	}
	// The parts in file order; each reports whether reading must stop (the file has too many refusals), and
	// an account keeps what was read until then.
	parts := []func() (bool, error){
		func() (stop bool, err error) { a.users, stop, err = readItems(r, o, "users", r.user); return },
		func() (bool, error) { return r.kinds(o, a) },
		func() (stop bool, err error) {
			a.objects, stop, err = readItems(r, o, "custom_objects", r.customObject)
			return
		},
		func() (stop bool, err error) { a.views, stop, err = readItems(r, o, "views", r.view); return },
		func() (stop bool, err error) { a.records, stop, err = readItems(r, o, "records", r.record); return },
		func() (stop bool, err error) {
			a.rels, stop, err = readItems(r, o, "relationships", r.relationship)
			return
		},
	}
	for _, part := range parts {
		stop, err := part()
		if err != nil {
			return nil, err
		}
		if stop {
			break
		}
	}
	return a, nil
}

// readItems reads the list under key with read. A refused item is left out (its refusal recorded); stop
// reports that reading must end, with the items read so far.
func readItems[T any](r *reader, o *object, key string, read func(*yaml.Node) (T, error)) (out []T, stop bool, err error) {
	items, err := o.list(key)
	if err != nil {
		return nil, false, err
	}
	for _, it := range items {
		v, err := read(it)
		if err != nil {
			if r.skip(err) {
				return out, true, nil
			}
			continue
		}
		out = append(out, v)
	}
	return out, false, nil
}

// kinds reads the fields an account gives the built-in kinds.
func (r *reader) kinds(o *object, a *rawAccount) (stop bool, err error) {
	if !o.has("fields") {
		return false, nil
	}
	kinds, err := r.object(o.val["fields"], "fields", core.BuiltinKinds)
	if err != nil {
		return false, err
	}
	for _, kind := range kinds.keys {
		items, err := kinds.list(kind)
		if err != nil {
			return false, err
		}
		if len(items) == 0 {
			return false, kinds.pos(kind).errorf("fields: %s has no fields; leave the kind out to get the standard template", kind)
		}
		a.kinds[kind] = &rawKind{at: kinds.pos(kind), fields: r.fields(items, kind)}
		if r.errs.stop() {
			return true, nil
		}
	}
	return false, nil
}

func (r *reader) user(n *yaml.Node) (rawUser, error) {
	o, err := r.object(n, "user", userKeys)
	if err != nil {
		return rawUser{}, err
	}
	u := rawUser{w: o.where()}
	if u.user.ID, _, err = o.int("id", 1, maxID); err != nil {
		return u, err
	}
	if u.user.Username, err = o.required("username", 255); err != nil {
		return u, err
	}
	if strings.ContainsAny(u.user.Username, ": \t") || strings.TrimSpace(u.user.Username) != u.user.Username {
		return u, o.pos("username").errorf("username %q may not hold spaces or ':' (it is the Basic-auth user name)", clip(u.user.Username))
	}
	if u.password, err = o.text("password", 1024, false); err != nil {
		return u, err
	}
	if u.password == "" {
		return u, o.pos("password").errorf("user %q: password is required (a user without one could never sign in)", clip(u.user.Username))
	}
	if len(u.password) > 72 {
		return u, o.pos("password").errorf("password is longer than 72 bytes (bcrypt reads no more)")
	}
	return u, userProfile(o, &u.user)
}

// userProfile reads what a user's record shows: email, names, status and whether the user is deleted.
func userProfile(o *object, u *core.User) error {
	var err error
	if u.Email, err = o.text("email", 254, false); err != nil {
		return err
	}
	if e := u.Email; e != "" && !plausibleEmail(e) {
		return o.pos("email").errorf("email %q is not an email address", clip(e))
	}
	if u.FirstName, err = o.text("firstname", 255, false); err != nil {
		return err
	}
	if u.LastName, err = o.text("lastname", 255, false); err != nil {
		return err
	}
	if u.Status, err = o.text("status", 64, false); err != nil {
		return err
	}
	if u.Status == "" {
		u.Status = "Active"
	}
	u.Deleted, err = o.bool("deleted")
	return err
}

// plausibleEmail is an address with text on both sides of an '@' and no spaces or URL delimiters.
func plausibleEmail(e string) bool {
	return strings.Contains(e, "@") && !strings.ContainsAny(e, " /?#") && !strings.HasPrefix(e, "@") && !strings.HasSuffix(e, "@")
}

func (r *reader) customObject(n *yaml.Node) (rawObject, error) {
	o, err := r.object(n, "custom object", objectKeys)
	if err != nil {
		return rawObject{}, err
	}
	co := rawObject{w: o.where(), obj: core.Object{Custom: true}}
	if co.obj.APIPrefix, err = o.required("api_prefix", 64); err != nil {
		return co, err
	}
	p := co.obj.APIPrefix
	if !apiPrefixPattern.MatchString(p) {
		return co, o.pos("api_prefix").errorf("api_prefix %q may hold only lower-case letters and digits (at most 32)", clip(p))
	}
	switch p {
	case core.KindRequirement, core.KindFeature, core.KindUseCase, "user", "object":
		return co, o.pos("api_prefix").errorf("api_prefix %q is taken by the interface itself (re, ft, uc, user, object)", p)
	}
	if co.obj.NameSingular, err = o.required("name_singular", 255); err != nil {
		return co, err
	}
	if co.obj.NamePlural, err = o.text("name_plural", 255, false); err != nil {
		return co, err
	}
	if co.obj.NamePlural == "" {
		co.obj.NamePlural = co.obj.NameSingular + "s"
	}
	if co.obj.IDPrefix, err = idPrefix(o); err != nil {
		return co, err
	}
	if co.obj.Description, err = o.text("description", maxText, true); err != nil {
		return co, err
	}
	items, err := o.list("fields")
	if err != nil {
		return co, err
	}
	co.fields = r.fields(items, p)
	return co, nil
}

// idPrefix reads a custom object's id_prefix, refusing the interface's own.
func idPrefix(o *object) (string, error) {
	ip, err := o.required("id_prefix", 16)
	switch {
	case err != nil:
		return "", err
	case !idPrefixPattern.MatchString(ip):
		return "", o.pos("id_prefix").errorf("id_prefix %q must be upper-case letters and digits, starting with a letter (at most 10)", clip(ip))
	case ip == "RE" || ip == "FT" || ip == "UC" || ip == "CO":
		return "", o.pos("id_prefix").errorf("id_prefix %q is taken (RE, FT, UC and CO are the interface's own)", ip)
	}
	return ip, nil
}

func (r *reader) view(n *yaml.Node) (rawView, error) {
	o, err := r.object(n, "view", viewKeys)
	if err != nil {
		return rawView{}, err
	}
	v := rawView{w: o.where()}
	id, ok, err := o.int("id", 1, maxID)
	if err != nil {
		return v, err
	}
	if !ok {
		return v, o.pos("id").errorf("view: id is required (views are matched by id when a file is applied again)")
	}
	v.view.ID = id
	if v.view.Kind, err = o.required("kind", 64); err != nil {
		return v, err
	}
	if v.view.Name, err = o.required("name", 255); err != nil {
		return v, err
	}
	if v.view.Description, err = o.text("description", maxText, true); err != nil {
		return v, err
	}
	if v.createdBy, err = o.text("created_by", 255, false); err != nil { // "": the account's first user
		return v, err
	}
	if v.view.Conditions, err = o.text("conditions", maxText, false); err != nil {
		return v, err
	}
	v.view.Conditions = strings.TrimSpace(v.view.Conditions)
	return v, nil
}

func (r *reader) record(n *yaml.Node) (rawRecord, error) {
	o, err := r.object(n, "record", recordKeys)
	if err != nil {
		return rawRecord{}, err
	}
	rec := rawRecord{w: o.where()}
	if rec.kind, err = o.required("kind", 64); err != nil {
		return rec, err
	}
	id, ok, err := o.int("id", 1, maxID)
	if err != nil {
		return rec, err
	}
	if !ok {
		// Without an id a second apply could not tell the record from a new one; refusing keeps applying
		// idempotent.
		return rec, o.pos("id").errorf("record: id is required (seed records are matched by kind and id, so applying twice changes nothing)")
	}
	rec.id = id
	if rec.createdBy, err = o.text("created_by", 255, false); err != nil { // "": the account's first user
		return rec, err
	}
	if rec.createdTime, _, err = o.int("created_time", 1, maxTime); err != nil {
		return rec, err
	}
	if !o.has("fields") {
		return rec, o.pos("fields").errorf("record %s %d: fields is required (at least its required fields)", rec.kind, rec.id)
	}
	vals, err := r.object(o.val["fields"], "fields of a record", nil)
	if err != nil {
		return rec, err
	}
	for _, name := range vals.keys {
		rv, err := r.value(vals, name)
		if err != nil {
			return rec, err
		}
		rec.values = append(rec.values, rv)
	}
	return rec, nil
}

// value reads one field_<n> of a seed record: a single value or a list of them.
func (r *reader) value(vals *object, name string) (rawValue, error) {
	at := vals.pos(name)
	if !fieldNamePattern.MatchString(name) {
		return rawValue{}, r.at(vals.key[name]).errorf("%q is not a field name (field_<n>, the id of a field of the kind)", clip(name))
	}
	v, err := r.resolve(vals.val[name])
	if err != nil {
		return rawValue{}, err
	}
	rv := rawValue{name: name, at: at}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag != "!!null" {
			rv.parts = []string{v.Value}
		}
	case yaml.SequenceNode:
		rv.isList = true
		for _, it := range v.Content {
			it, err := r.resolve(it)
			if err != nil {
				return rv, err
			}
			if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
				return rv, r.at(it).errorf("%s: list items must be single values", name)
			}
			rv.parts = append(rv.parts, it.Value)
		}
	default:
		return rv, at.errorf("%s must be a value or a list of values, not %s", name, yamlnode.KindName(v))
	}
	return rv, nil
}

func (r *reader) relationship(n *yaml.Node) (rawRel, error) {
	o, err := r.object(n, "relationship", relKeys)
	if err != nil {
		return rawRel{}, err
	}
	rel := rawRel{w: o.where()}
	for _, side := range []struct {
		key string
		dst *ref
	}{{"from", &rel.from}, {"to", &rel.to}} {
		s, err := o.required(side.key, 64)
		if err != nil {
			return rel, err
		}
		m := refPattern.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			return rel, o.pos(side.key).errorf("%s %q does not name a record (an id prefix, a dash and an id, e.g. RE-1 or RSK-3)", side.key, clip(s))
		}
		id, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil || id < 1 || id > maxID {
			return rel, o.pos(side.key).errorf("%s %q: the id is out of range", side.key, clip(s))
		}
		*side.dst = ref{prefix: strings.ToUpper(m[1]), id: id}
	}
	if rel.typ, err = o.required("type", 16); err != nil {
		return rel, err
	}
	if rel.typ != "parent" && rel.typ != "related" {
		return rel, o.pos("type").errorf("relationship type %q is not parent or related", clip(rel.typ))
	}
	if rel.from == rel.to {
		return rel, o.pos("to").errorf("a record cannot be related to itself (%s)", rel.from)
	}
	return rel, nil
}
