package api_test

// The model of TestModel (model_test.go): the account, the state of its records as docs/api.md describes it,
// and what reads, searches, views and field histories must show (what a write does to the state is
// expectUpdate and apply, beside the operations). It is written from the manual, not from the core's code:
// where it computes a canonical value or a plain text, it does so for the few value shapes the generator
// sends (modelgen_test.go), whose result the manual states.

import (
	"encoding/xml"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/reqgate/reqgate/core"
)

const keyModel = "model"

// Field ids of the model account.
const (
	mReTitle     = 101 // Textbox, required, title
	mReDesc      = 102 // Textarea
	mReStatus    = 103 // Pick One, default 1
	mReOwner     = 104 // Pick One of users
	mRePlatforms = 105 // Pick Multiple, defaults 1 and 3
	mReEstimate  = 106 // Number-Integer, default_value 5
	mReDue       = 107 // Date
	mReApproved  = 108 // Checkbox
	mReReviewers = 109 // Pick Multiple of users
	mReCode      = 110 // Textbox, max_size 20

	mFtTitle  = 201
	mFtStatus = 202 // Pick One without default
	mUcTitle  = 301

	mRiskTitle    = 401
	mRiskSeverity = 402 // Pick One, default 2
	mRiskDue      = 403 // Date
	mRiskDone     = 404 // Checkbox
	mRiskImpact   = 405 // Number-Integer
	mRiskAreas    = 406 // Pick Multiple
	mRiskOwner    = 407 // Pick One of users
	mRiskChance   = 408 // Number
	mRiskNotes    = 409 // Text
	mRiskContact  = 410 // Email
	mRiskLink     = 411 // URL
)

// Views of the model account: id -> kind and the model's reading of its conditions.
var modelViews = []struct {
	id    int64
	kind  string
	conds string
}{
	{1, "re", "field_103=1"},
	{2, "re", ""},
	{3, "risk", "field_402=3"},
}

func options(labels ...string) []core.Option {
	out := make([]core.Option, len(labels))
	for i, l := range labels {
		out[i] = core.Option{Value: int64(i + 1), Label: l, Sort: i + 1}
	}
	return out
}

// modelProvision is the account TestModel works on: requirements with a field of every type the generator
// writes, features and use cases with few fields, a custom object "risk", three users who act in turn, and
// views. It holds no seed records: every record is made through the interface, so the model knows it whole.
func modelProvision(tb testing.TB) *core.Provision {
	status := options("Pending Review", "Accepted", "Rejected")
	status[0].Default = true
	platforms := options("Web", "iOS", "Android", "Desktop")
	platforms[0].Default, platforms[2].Default = true, true
	severity := options("Low", "Medium", "High")
	severity[1].Default = true
	title := func(id int64, kind string) core.Field {
		return core.Field{ID: id, Kind: kind, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title",
			Required: true, Sort: 1, MaxSize: 255}
	}
	return &core.Provision{Accounts: []core.AccountSpec{{
		APIKey: keyModel,
		Name:   "Model Co",
		Users: []core.UserSpec{
			user(tb, 5, "alice", "alice@model.test", "Alice", "Archer", "alice-secret"),
			user(tb, 6, "bob", "bob@model.test", "Bob", "Baker", "bob-secret"),
			user(tb, 7, "carol", "carol@model.test", "Carol", "Cooper", "carol-secret"),
		},
		Fields: map[string][]core.Field{
			"re": {
				title(mReTitle, "re"),
				{ID: mReDesc, Kind: "re", Label: "Description", Type: core.TypeTextarea, SpecialPurpose: "desc", Sort: 2, MaxSize: 30000},
				{ID: mReStatus, Kind: "re", Label: "Status", Type: core.TypePickOne, SpecialPurpose: "status", Sort: 3,
					ListType: core.ListNormal, Options: status},
				{ID: mReOwner, Kind: "re", Label: "Owner", Type: core.TypePickOne, SpecialPurpose: "owner", Sort: 4, ListType: core.ListUser},
				{ID: mRePlatforms, Kind: "re", Label: "Platforms", Type: core.TypePickMultiple, Sort: 5,
					ListType: core.ListNormal, Options: platforms},
				{ID: mReEstimate, Kind: "re", Label: "Estimate", Type: core.TypeInteger, Sort: 6, DefaultValue: "5"},
				{ID: mReDue, Kind: "re", Label: "Due", Type: core.TypeDate, Sort: 7},
				{ID: mReApproved, Kind: "re", Label: "Approved", Type: core.TypeCheckbox, Sort: 8},
				{ID: mReReviewers, Kind: "re", Label: "Reviewers", Type: core.TypePickMultiple, Sort: 9, ListType: core.ListUser},
				{ID: mReCode, Kind: "re", Label: "Code", Type: core.TypeTextbox, Sort: 10, MaxSize: 20},
			},
			"ft": {
				title(mFtTitle, "ft"),
				{ID: mFtStatus, Kind: "ft", Label: "State", Type: core.TypePickOne, Sort: 2, ListType: core.ListNormal,
					Options: options("Open", "Closed")},
			},
			"uc": {title(mUcTitle, "uc")},
		},
		Objects: []core.ObjectSpec{{
			Object: core.Object{APIPrefix: "risk", NameSingular: "Risk", NamePlural: "Risks", IDPrefix: "RSK", Custom: true},
			Fields: []core.Field{
				title(mRiskTitle, "risk"),
				{ID: mRiskSeverity, Kind: "risk", Label: "Severity", Type: core.TypePickOne, Sort: 2, ListType: core.ListNormal,
					Options: severity},
				{ID: mRiskDue, Kind: "risk", Label: "Due", Type: core.TypeDate, Sort: 3},
				{ID: mRiskDone, Kind: "risk", Label: "Mitigated", Type: core.TypeCheckbox, Sort: 4},
				{ID: mRiskImpact, Kind: "risk", Label: "Impact", Type: core.TypeInteger, Sort: 5},
				{ID: mRiskAreas, Kind: "risk", Label: "Areas", Type: core.TypePickMultiple, Sort: 6, ListType: core.ListNormal,
					Options: options("Schedule", "Budget", "Quality")},
				{ID: mRiskOwner, Kind: "risk", Label: "Owner", Type: core.TypePickOne, Sort: 7, ListType: core.ListUser},
				{ID: mRiskChance, Kind: "risk", Label: "Probability", Type: core.TypeNumber, Sort: 8},
				{ID: mRiskNotes, Kind: "risk", Label: "Notes", Type: core.TypeText, Sort: 9},
				{ID: mRiskContact, Kind: "risk", Label: "Contact", Type: core.TypeEmail, Sort: 10},
				{ID: mRiskLink, Kind: "risk", Label: "Reference", Type: core.TypeURL, Sort: 11},
			},
		}},
		Views: []core.ViewSpec{
			{View: core.View{ID: 1, Kind: "re", Name: "Pending", Conditions: "field_103=1"}, CreatedByUsername: "alice"},
			{View: core.View{ID: 2, Kind: "re", Name: "All requirements"}, CreatedByUsername: "bob"},
			{View: core.View{ID: 3, Kind: "risk", Name: "High risks", Conditions: "field_402=3"}, CreatedByUsername: "alice"},
		},
	}}}
}

// mUser is a user of the model account who sends requests.
type mUser struct {
	id                 int64
	name, pass         string
	email, displayName string
}

var modelUsers = []mUser{
	{5, "alice", "alice-secret", "alice@model.test", "Alice Archer"},
	{6, "bob", "bob-secret", "bob@model.test", "Bob Baker"},
	{7, "carol", "carol-secret", "carol@model.test", "Carol Cooper"},
}

func modelUser(id int64) (mUser, bool) {
	for _, u := range modelUsers {
		if u.id == id {
			return u, true
		}
	}
	return mUser{}, false
}

// mKind is a kind of record of the model account.
type mKind struct {
	seg    string // path segment
	root   string // root element of a record and of its summaries
	prefix string // RE-, FT-, UC-, CO-
	custom bool
	fields []core.Field // by sort
	title  int64        // the title field's id
	recs   []*mRecord   // in order of creation
	byID   map[int64]*mRecord
	maxID  int64
}

func (k *mKind) field(id int64) (core.Field, bool) {
	i := slices.IndexFunc(k.fields, func(f core.Field) bool { return f.ID == id })
	if i < 0 {
		return core.Field{}, false
	}
	return k.fields[i], true
}

// mRecord is a record as the model knows it.
type mRecord struct {
	kind             *mKind
	id               int64
	version          int64
	created, updated int64
	createdBy, updBy int64
	deleted          int64 // 0 while live
	comment          string
	values           map[int64]string        // canonical stored values
	history          map[int64][]core.Change // field id -> changes, oldest first
	snap             *snapshot               // a read kept to be sent back later, maybe stale by then
}

// snapshot is a record read as the interface gave it, with the version it showed.
type snapshot struct {
	ver     string // /api, /api1 or /api2
	body    string
	version int64
}

func newModelKinds(p *core.Provision) []*mKind {
	a := p.Accounts[0]
	mk := func(seg, root, prefix string, custom bool, fields []core.Field) *mKind {
		fs := slices.Clone(fields)
		slices.SortStableFunc(fs, func(a, b core.Field) int {
			if a.Sort != b.Sort {
				return a.Sort - b.Sort
			}
			return int(a.ID - b.ID)
		})
		k := &mKind{seg: seg, root: root, prefix: prefix, custom: custom, fields: fs, byID: map[int64]*mRecord{}}
		for _, f := range fs {
			if f.SpecialPurpose == "title" {
				k.title = f.ID
			}
		}
		return k
	}
	return []*mKind{
		mk("re", "requirement", "RE-", false, a.Fields["re"]),
		mk("ft", "feature", "FT-", false, a.Fields["ft"]),
		mk("uc", "use_case", "UC-", false, a.Fields["uc"]),
		mk("risk", "custom_object", "CO-", true, a.Objects[0].Fields),
	}
}

// textareaPlain is the plain text of a stored Textarea value, for the shapes the generator stores: words,
// HTML-escaped words, either inside one <p>.
func textareaPlain(stored string) string {
	s := strings.TrimPrefix(stored, "<p>")
	s = strings.TrimSuffix(s, "</p>")
	return strings.TrimSpace(html.UnescapeString(s))
}

// textareaHTML is what a version-1 write of plain text stores (docs/api.md, Writing values): the text with
// &, < and > escaped.
func textareaHTML(text string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
}

// ---- what the interface shows ----

// xValue is a <value>, <old_value> or <new_value> element of any shape.
type xValue struct {
	ID       *string  `xml:"id,attr"`
	Email    *string  `xml:"email,attr"`
	Attr     *string  `xml:"value,attr"`
	Text     string   `xml:",chardata"`
	Values   []xValue `xml:"value"`
	Year     *string  `xml:"year"`
	Month    *string  `xml:"month"`
	Date     *string  `xml:"date"`
	Timezone *string  `xml:"timezone"`
	Other    []xAny   `xml:",any"`
}

type xAny struct{ XMLName xml.Name }

func strp(s string) *string { return &s }

// dump writes v in one line, so that the model's expectation and the interface's answer compare as text.
// The text of an element with child elements (white space between them) is left out.
func (v xValue) dump() string {
	var parts []string
	if v.ID != nil {
		parts = append(parts, "id="+strconv.Quote(*v.ID))
	}
	if v.Email != nil {
		parts = append(parts, "email="+strconv.Quote(*v.Email))
	}
	if v.Attr != nil {
		parts = append(parts, "value="+strconv.Quote(*v.Attr))
	}
	nested := len(v.Values) > 0 || v.Year != nil || v.Month != nil || v.Date != nil || v.Timezone != nil || len(v.Other) > 0
	switch {
	case !nested:
		parts = append(parts, strconv.Quote(v.Text))
	case strings.TrimSpace(v.Text) != "":
		parts = append(parts, "mixed text "+strconv.Quote(v.Text))
	}
	for _, c := range v.Values {
		parts = append(parts, c.dump())
	}
	for _, p := range []struct {
		name string
		v    *string
	}{{"year", v.Year}, {"month", v.Month}, {"date", v.Date}, {"timezone", v.Timezone}} {
		if p.v != nil {
			parts = append(parts, p.name+"="+strconv.Quote(*p.v))
		}
	}
	for _, o := range v.Other {
		parts = append(parts, "unexpected <"+o.XMLName.Local+">")
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// choice is one picklist choice as reads and histories show it.
func choice(f core.Field, n int64) xValue {
	id := strconv.FormatInt(n, 10)
	if f.ListType == core.ListUser {
		u, _ := modelUser(n)
		return xValue{ID: &id, Email: strp(u.email), Text: u.displayName}
	}
	o, _ := f.Option(n)
	return xValue{ID: &id, Text: o.Label}
}

func splitIDs(v string) []int64 {
	var ids []int64
	for p := range strings.SplitSeq(v, ",") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err == nil {
			ids = append(ids, n)
		}
	}
	return ids
}

// readValue is the <value> of field f holding stored value v in a record read of version ver (docs/api.md,
// Record read).
func readValue(f core.Field, v string, ver int) xValue {
	switch {
	case v == "":
		return xValue{}
	case f.Type == core.TypePickOne:
		n, _ := strconv.ParseInt(v, 10, 64)
		return choice(f, n)
	case f.Type == core.TypePickMultiple:
		var out xValue
		for _, n := range splitIDs(v) {
			out.Values = append(out.Values, choice(f, n))
		}
		return out
	case f.Type == core.TypeTextarea && ver < 2:
		return xValue{Text: textareaPlain(v)}
	}
	return xValue{Text: v}
}

// historyValue is an <old_value> or <new_value> of field f holding stored value v (docs/api.md, Field
// history).
func historyValue(f core.Field, v string) xValue {
	switch {
	case v == "":
		return xValue{}
	case f.Type == core.TypeDate:
		y, m, d := v[:4], v[5:7], v[8:]
		return xValue{Year: &y, Month: &m, Date: &d, Timezone: strp("GMT")}
	case f.Type == core.TypeCheckbox:
		if v == "1" {
			return xValue{Attr: strp("1"), Text: "Checked"}
		}
		return xValue{Attr: strp("0"), Text: "Unchecked"}
	case f.Type == core.TypeTextarea:
		return xValue{Text: v}
	}
	return readValue(f, v, 2)
}

// xRecord is a record read.
type xRecord struct {
	XMLName xml.Name
	Fields  []xField `xml:"fields>field"`
	Other   []xAny   `xml:",any"`
}

type xField struct {
	Name     string  `xml:"name"`
	Label    string  `xml:"label"`
	Value    xValue  `xml:"value"`
	Prefix   *string `xml:"prefix"`
	Plain    *string `xml:"value_plaintext"`
	ListType *string `xml:"list_type"`
	Sort     *string `xml:"sort"`
	Other    []xAny  `xml:",any"`
}

func (f xField) dump() string {
	s := f.Name + " label=" + strconv.Quote(f.Label) + " value=" + f.Value.dump()
	for _, p := range []struct {
		name string
		v    *string
	}{{"prefix", f.Prefix}, {"value_plaintext", f.Plain}, {"list_type", f.ListType}, {"sort", f.Sort}} {
		if p.v != nil {
			s += " " + p.name + "=" + strconv.Quote(*p.v)
		}
	}
	for _, o := range f.Other {
		s += " unexpected <" + o.XMLName.Local + ">"
	}
	return s
}

// dumpRead is a record read as text, one field a line: the model's expectation for rec read in version ver.
func dumpRead(rec *mRecord, ver int) string {
	k := rec.kind
	lines := []string{"<" + k.root + ">"}
	add := func(f xField) { lines = append(lines, f.dump()) }
	add(xField{Name: "id", Label: "ID", Value: xValue{Text: strconv.FormatInt(rec.id, 10)}, Prefix: strp(k.prefix), Sort: strp("0")})
	for _, f := range k.fields {
		x := xField{Name: f.Name(), Label: f.Label, Value: readValue(f, rec.values[f.ID], ver), Sort: strp(strconv.Itoa(f.Sort))}
		if f.Type == core.TypeTextarea && ver >= 2 {
			x.Plain = strp(textareaPlain(rec.values[f.ID]))
		}
		if f.IsPicklist() {
			x.ListType = strp(f.ListType)
		}
		add(x)
	}
	system := func(name, label, value string) {
		add(xField{Name: name, Label: label, Value: xValue{Text: value}, Sort: strp("")})
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	system("version_number", "Version Number (Auto-generated)", itoa(rec.version))
	system("created_time", "Created Time (GMT Timestamp)", itoa(rec.created))
	system("last_updated_time", "Last Updated Time (GMT Timestamp)", itoa(rec.updated))
	if !k.custom {
		system("created_by", "Created By", itoa(rec.createdBy))
		system("last_updated_by", "Last Updated By", itoa(rec.updBy))
		system("version_comment", "Version Comment", rec.comment)
	}
	return strings.Join(lines, "\n")
}

// dumpReadXML is a record read the interface gave, in the form of dumpRead.
func dumpReadXML(body string) (string, error) {
	var x xRecord
	if err := xml.Unmarshal([]byte(body), &x); err != nil {
		return "", fmt.Errorf("record read does not parse: %w", err)
	}
	lines := []string{"<" + x.XMLName.Local + ">"}
	for _, f := range x.Fields {
		lines = append(lines, f.dump())
	}
	for _, o := range x.Other {
		lines = append(lines, "unexpected <"+o.XMLName.Local+">")
	}
	return strings.Join(lines, "\n"), nil
}

// xStamp is a time with its unit attribute.
type xStamp struct {
	Unit string `xml:"unit,attr"`
	Text string `xml:",chardata"`
}

func (s xStamp) dump() string { return s.Text + " (" + s.Unit + ")" }

func stamp(t int64) xStamp { return xStamp{Unit: "GMT Timestamp", Text: strconv.FormatInt(t, 10)} }

// xSummary is one record summary of a search, a view or a deleted-record search.
type xSummary struct {
	XMLName   xml.Name
	ID        string `xml:"id"`
	IDPrefix  string `xml:"id_prefix"`
	Title     string `xml:"title"`
	Version   string `xml:"version_number"`
	Created   xStamp `xml:"created_time"`
	Updated   xStamp `xml:"last_updated_time"`
	CreatedBy string `xml:"created_by"`
	UpdatedBy string `xml:"last_updated_by"`
	Other     []xAny `xml:",any"`
}

func (s xSummary) dump() string {
	out := fmt.Sprintf("<%s> id=%s %s title=%q version=%s created=%s updated=%s by=%s/%s", s.XMLName.Local, s.ID,
		s.IDPrefix, s.Title, s.Version, s.Created.dump(), s.Updated.dump(), s.CreatedBy, s.UpdatedBy)
	for _, o := range s.Other {
		out += " unexpected <" + o.XMLName.Local + ">"
	}
	return out
}

func summaryOf(r *mRecord) xSummary {
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	return xSummary{XMLName: xml.Name{Local: r.kind.root}, ID: itoa(r.id), IDPrefix: r.kind.prefix,
		Title: r.values[r.kind.title], Version: itoa(r.version), Created: stamp(r.created), Updated: stamp(r.updated),
		CreatedBy: itoa(r.createdBy), UpdatedBy: itoa(r.updBy)}
}

// dumpSummaries is a list of summaries under root, one a line.
func dumpSummaries(root string, recs []*mRecord) string {
	lines := []string{"<" + root + ">"}
	for _, r := range recs {
		lines = append(lines, summaryOf(r).dump())
	}
	return strings.Join(lines, "\n")
}

func dumpSummariesXML(body string) (string, error) {
	var x struct {
		XMLName xml.Name
		Items   []xSummary `xml:",any"`
	}
	if err := xml.Unmarshal([]byte(body), &x); err != nil {
		return "", fmt.Errorf("summaries do not parse: %w", err)
	}
	lines := []string{"<" + x.XMLName.Local + ">"}
	for _, s := range x.Items {
		lines = append(lines, s.dump())
	}
	return strings.Join(lines, "\n"), nil
}

// xHistory is one <history> of a field history.
type xHistory struct {
	UserID string `xml:"user_id"`
	Action string `xml:"action"`
	Old    xValue `xml:"old_value"`
	New    xValue `xml:"new_value"`
	Time   xStamp `xml:"activity_time"`
	Other  []xAny `xml:",any"`
}

func (h xHistory) dump() string {
	out := fmt.Sprintf("user=%s %s old=%s new=%s at=%s", h.UserID, h.Action, h.Old.dump(), h.New.dump(), h.Time.dump())
	for _, o := range h.Other {
		out += " unexpected <" + o.XMLName.Local + ">"
	}
	return out
}

// dumpHistory is the model's field history of field f, one change a line.
func dumpHistory(f core.Field, changes []core.Change) string {
	lines := []string{"<history_items>"}
	for _, c := range changes {
		h := xHistory{UserID: strconv.FormatInt(c.UserID, 10), Action: "Modified", Old: historyValue(f, c.Old),
			New: historyValue(f, c.New), Time: stamp(c.Time)}
		lines = append(lines, h.dump())
	}
	return strings.Join(lines, "\n")
}

func dumpHistoryXML(body string) (string, error) {
	var x struct {
		XMLName xml.Name
		Items   []xHistory `xml:"history"`
		Other   []xAny     `xml:",any"`
	}
	if err := xml.Unmarshal([]byte(body), &x); err != nil {
		return "", fmt.Errorf("field history does not parse: %w", err)
	}
	lines := []string{"<" + x.XMLName.Local + ">"}
	for _, h := range x.Items {
		lines = append(lines, h.dump())
	}
	for _, o := range x.Other {
		lines = append(lines, "unexpected <"+o.XMLName.Local+">")
	}
	return strings.Join(lines, "\n"), nil
}

// ---- search ----

// mCond is one search condition as the model reads it.
type mCond struct {
	attr string
	op   byte
	val  string
}

func (c mCond) String() string { return c.attr + string(c.op) + c.val }

// matches reports whether rec meets c (docs/api.md, The search condition language). The live/deleted
// choice is made by the caller.
func (c mCond) matches(rec *mRecord) bool {
	n, _ := strconv.ParseInt(c.val, 10, 64)
	cmp := func(t int64) bool {
		if c.op == '<' {
			return t < n
		}
		return t > n
	}
	switch c.attr {
	case "created_time":
		return cmp(rec.created)
	case "last_updated_time":
		return cmp(rec.updated)
	case "deleted_time":
		return rec.deleted != 0 && cmp(rec.deleted)
	case "created_by":
		return rec.createdBy == n
	case "last_updated_by":
		return rec.updBy == n
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(c.attr, "field_"), 10, 64)
	f, _ := rec.kind.field(id)
	v := rec.values[id]
	switch f.Type {
	case core.TypeTextbox:
		// Exactly the value, ignoring case as Unicode folds it, a combining accent the same as a composed one.
		return caseless(v) == caseless(c.val)
	case core.TypePickMultiple:
		return slices.Contains(splitIDs(v), n)
	}
	return v == c.val
}

// search is what the model finds in kind k for conds: live records, or deleted ones when a condition is on
// deleted_time, by id.
func search(k *mKind, conds []mCond) []*mRecord {
	deleted := slices.ContainsFunc(conds, func(c mCond) bool { return c.attr == "deleted_time" })
	var out []*mRecord
	for _, r := range k.recs {
		if (r.deleted != 0) != deleted {
			continue
		}
		if !slices.ContainsFunc(conds, func(c mCond) bool { return !c.matches(r) }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *mRecord) int { return int(a.id - b.id) })
	return out
}

// caseless is the form in which a Textbox value and a search word compare: Unicode's canonical caseless
// match (full case folding between canonical decompositions), so that ÉTÉ finds été, STRASSE finds Straße,
// and an accent written as a combining character is the composed one.
func caseless(s string) string {
	return norm.NFD.String(cases.Fold().String(norm.NFD.String(s)))
}

// viewConds are the conditions of a view's definition, in the model's terms.
func viewConds(s string) []mCond {
	if s == "" {
		return nil
	}
	attr, val, _ := strings.Cut(s, "=")
	return []mCond{{attr, '=', val}}
}
