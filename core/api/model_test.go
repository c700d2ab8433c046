package api_test

// TestModel is a model-based randomized test of the XML interface: a seeded random sequence of operations
// (creates, reads, partial updates, records read and sent back, stale writes, deletes, field histories,
// searches, views), sent over real HTTP to the real core on each engine (a SQLite file, a private PostgreSQL
// server), each answer compared with a model of the account as docs/api.md describes it. This file runs the
// operations; modelgen_test.go makes what they send, modelstate_test.go is the model and what it expects to
// read.
//
// A short run (1000 operations per engine) is part of every go test. A long run is by hand:
//
//	go test ./core/api -run TestModel -model.ops=32000 -model.seed=7 -timeout 30m
//
// A failure names the seed, the operation's index, the operation and its exchanges, and the command that
// replays it.

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/testsupport"
)

var (
	modelSeed = flag.Int64("model.seed", 20261126, "seed of TestModel's random operations")
	modelOps  = flag.Int("model.ops", 1000, "operations of TestModel per engine")
)

func TestModel(t *testing.T) {
	seed, ops := *modelSeed, *modelOps
	t.Logf("seed %d, %d operations per engine (-model.seed, -model.ops)", seed, ops)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			st := eng.open(t)
			// The model account beside the harness's accounts (serve applies those, and closes st at the end).
			p := modelProvision(t)
			if err := st.Apply(context.Background(), p); err != nil {
				st.Close()
				t.Fatalf("apply the model account: %v", err)
			}
			clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
			e := serve(t, st, api.Options{Now: clk.Now})
			r := &run{t: t, e: e, clk: clk, engine: eng.name, seed: seed, ops: ops, rng: rand.New(rand.NewSource(seed)),
				kinds: newModelKinds(p)}
			for r.i = 0; r.i < ops; r.i++ {
				r.step()
			}
			r.i = ops
			r.sweep()
			t.Logf("%s: %s", eng.name, r.stats())
		})
	}
}

// run is one engine's run: the core under test, the model, and the operation going on.
type run struct {
	t      *testing.T
	e      *env
	clk    *testsupport.Clock
	engine string
	seed   int64
	ops    int
	rng    *rand.Rand
	kinds  []*mKind

	i     int      // index of the operation
	name  string   // the operation's name
	op    string   // what the operation is
	trace []string // its exchanges
	now   int64    // the core's clock during the operation
	who   mUser    // who sends it
	bad   bool     // whether the operation's writes may hold values the manual refuses
	count map[string]int
}

// step runs one random operation.
func (r *run) step() {
	r.clk.Add(time.Duration(r.rng.Intn(3)) * time.Second) // equal times happen too: searches compare strictly
	r.now = r.clk.Now().Unix()
	r.who = modelUsers[r.rng.Intn(len(modelUsers))]
	r.bad = r.chance(25)
	r.trace = r.trace[:0]
	ops := []struct {
		weight int
		name   string
		fn     func()
	}{
		{20, "create", r.opCreate},
		{16, "read", r.opRead},
		{20, "update", r.opUpdate},
		{12, "send back", r.opSendBack},
		{5, "stale write", r.opStale},
		{6, "delete", r.opDelete},
		{9, "history", r.opHistory},
		{9, "search", r.opSearch},
		{3, "view", r.opView},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := r.rng.Intn(total)
	for _, o := range ops {
		if n -= o.weight; n < 0 {
			r.name, r.op = o.name, o.name
			o.fn()
			return
		}
	}
}

func (r *run) stats() string {
	names := make([]string, 0, len(r.count))
	for n := range r.count {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %d, ", n, r.count[n])
	}
	recs, live := 0, 0
	for _, k := range r.kinds {
		recs += len(k.recs)
		for _, rec := range k.recs {
			if rec.deleted == 0 {
				live++
			}
		}
	}
	fmt.Fprintf(&b, "%d records (%d live)", recs, live)
	return b.String()
}

// fail ends the run with everything needed to replay it.
func (r *run) fail(format string, args ...any) {
	r.t.Helper()
	replay := min(r.i+1, r.ops) // the final sweep (index ops) follows every operation
	r.t.Fatalf("the core disagrees with the model: seed %d, operation %d (%s as %s, time %d): %s\n\nexchanges of the operation:\n%s\n\nreplay: go test ./core/api -run 'TestModel/%s' -model.seed=%d -model.ops=%d -v",
		r.seed, r.i, r.op, r.who.name, r.now, fmt.Sprintf(format, args...), strings.Join(r.trace, "\n\n"),
		r.engine, r.seed, replay)
}

// do sends one request as the operation's user and keeps the exchange for a failure message. A write body
// travels in an encoding chosen by encode.
func (r *run) do(method, path, body string) resp {
	r.t.Helper()
	q := req{Method: method, Path: path, Body: body, User: r.who.name, Pass: r.who.pass}
	line := method + " " + path
	if body != "" {
		var ct, how string
		q.Body, ct, how = r.encode(body)
		q.Header = map[string]string{"Content-Type": ct}
		if ct == "" {
			ct = "none"
		}
		line += "\nContent-Type: " + ct
		if how != "" {
			line += " (" + how + ", shown here as UTF-8)"
		}
		line += "\n" + clipText(body)
	}
	res, err := r.e.send(q)
	if err != nil {
		r.trace = append(r.trace, line)
		r.fail("%v", err)
	}
	r.trace = append(r.trace, fmt.Sprintf("%s\n-> %d %s", line, res.Status, clipText(res.Body)))
	return res
}

// clipText shortens s for a failure message, at a character boundary.
func clipText(s string) string {
	if len(s) <= 4000 {
		return s
	}
	i := 4000
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// expect fails unless res has status want; an error status must carry the interface's error body.
func (r *run) expect(res resp, want int, why string) {
	r.t.Helper()
	if res.Status != want {
		r.fail("status %d, the model expects %d (%s)", res.Status, want, why)
	}
	if r.count == nil {
		r.count = map[string]int{}
	}
	r.count[r.name+" "+strconv.Itoa(want)]++
	if want >= 400 && !strings.Contains(res.Body, "<error>") {
		r.fail("a %d without an <error> body", want)
	}
}

// same fails unless the interface's answer, as text, is the model's.
func (r *run) same(what, got, want string) {
	r.t.Helper()
	if got != want {
		r.fail("%s: the core and the model differ\n--- core:\n%s\n--- model:\n%s\n--- first difference: %s", what, got, want, firstDiff(got, want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: core %q, model %q", i+1, a, b)
		}
	}
	return "none"
}

// ---- operations ----

// sentField is one field of the kind a write sends.
type sentField struct {
	f core.Field
	w wval
}

// writeProblem is a part of a write body that the manual refuses (400), besides invalid values.
var writeProblems = []string{"unknown field", "duplicate field", "id on create", "system field on create"}

// opCreate creates a record of a random kind with a random subset of its fields.
func (r *run) opCreate() {
	k := r.pickKind()
	ver := r.pickVersion(k)
	var sent []sentField
	for _, f := range k.fields {
		in := r.chance(45)
		if f.ID == k.title {
			in = r.chance(96)
		}
		if in {
			sent = append(sent, sentField{f, r.genValue(f, versionOf(ver))})
		}
	}
	var parts []string
	valid, why := true, "every value valid"
	got := map[int64]bool{}
	for _, s := range sent {
		parts = append(parts, fieldXML(s.f.Name(), s.w.elem))
		got[s.f.ID] = true
		if !s.w.valid {
			valid, why = false, s.f.Name()+" is not valid"
		}
		if s.f.Required && s.w.canon == "" {
			valid, why = false, s.f.Name()+" is required"
		}
	}
	if !got[k.title] {
		valid, why = false, "the title is required"
	}
	var comment string
	if !k.custom && r.chance(30) || k.custom && r.bad && r.chance(8) {
		var ok bool
		if comment, ok = r.comment(); !ok {
			valid, why = false, "version_comment is longer than 30000 characters"
		}
		if k.custom {
			// A custom object's record has no version_comment (docs/api.md): an unknown field there.
			valid, why = false, "version_comment is an unknown field of a custom object"
		}
		parts = append(parts, fieldXML("version_comment", textElem(r, comment)))
	}
	if r.chance(6) {
		switch p := pick(r, writeProblems); p {
		case "unknown field":
			parts = append(parts, fieldXML("field_999", "<value>1</value>"))
			valid, why = false, p
		case "duplicate field":
			if len(parts) > 0 {
				parts = append(parts, parts[0])
				valid, why = false, p
			}
		case "id on create":
			parts = append(parts, fieldXML("id", "<value>1</value>"))
			valid, why = false, p
		case "system field on create":
			parts = append(parts, fieldXML(pick(r, []string{"version_number", "created_time", "created_by"}), "<value>1</value>"))
			valid, why = false, p
		}
	}
	r.rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	r.op = fmt.Sprintf("create %s %s", ver, k.seg)
	body, status, spoiled := r.writeBody(k, parts)
	res := r.do("POST", r.path(ver, k), body)
	if k.custom && ver != "/api2" {
		r.expect(res, 404, "custom objects need version 2")
		return
	}
	if status != 0 {
		r.expect(res, status, spoiled)
		return
	}
	if !valid {
		r.expect(res, 400, why)
		return
	}
	r.expect(res, 201, why)
	loc := res.Header.Get("Location")
	base := r.e.URL + r.path(ver, k) + "/"
	idText, ok := strings.CutPrefix(loc, base)
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || id <= 0 {
		r.fail("Location %q is not %s{id}", loc, base)
	}
	if k.byID[id] != nil {
		r.fail("Location %q names a record that already exists", loc)
	}
	rec := &mRecord{kind: k, id: id, version: 1, created: r.now, updated: r.now, createdBy: r.who.id,
		updBy: r.who.id, comment: comment, values: map[int64]string{}, history: map[int64][]core.Change{}}
	for _, f := range k.fields {
		if d := defaultOf(f); d != "" {
			rec.values[f.ID] = d
		}
	}
	for _, s := range sent {
		rec.values[s.f.ID] = s.w.canon
	}
	k.recs = append(k.recs, rec)
	k.byID[id] = rec
	k.maxID = max(k.maxID, id)
}

// opRead reads a record and compares every field.
func (r *run) opRead() {
	k := r.pickKind()
	t := r.pickTarget(k, 85)
	ver := r.pickVersion(k)
	r.op = fmt.Sprintf("read %s %s %s", ver, k.seg, t.idText())
	if t.live() && (ver == "/api2" || !k.custom) && r.chance(10) {
		r.otherMethod(k, t, ver)
		return
	}
	r.read(k, t, ver)
}

// otherMethod sends a record's address a HEAD, answered like a GET without a body, or a method the address
// does not serve: 405 with Allow naming GET, PUT and DELETE, and nothing changes.
func (r *run) otherMethod(k *mKind, t target, ver string) {
	method := pick(r, []string{"HEAD", "PATCH", "POST"})
	r.op = method + " " + r.op
	res := r.do(method, r.path(ver, k, t.idText()), "")
	if method == "HEAD" {
		r.expect(res, 200, "HEAD is answered like GET")
		if res.Body != "" {
			r.fail("a HEAD answered with a body")
		}
		return
	}
	r.expect(res, 405, "a record's address serves GET, PUT and DELETE")
	allow := res.Header.Get("Allow")
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if !strings.Contains(allow, m) {
			r.fail("Allow %q does not name %s", allow, m)
		}
	}
}

// read GETs a record and checks it against the model; it returns the body of a successful read.
func (r *run) read(k *mKind, t target, ver string) string {
	r.t.Helper()
	res := r.do("GET", r.path(ver, k, t.idText()), "")
	switch {
	case k.custom && ver != "/api2":
		r.expect(res, 404, "custom objects need version 2")
		return ""
	case !t.live():
		r.expect(res, 404, t.missing())
		return ""
	}
	r.expect(res, 200, "a live record")
	got, err := dumpReadXML(res.Body)
	if err != nil {
		r.fail("%v", err)
	}
	r.same("the record read", got, dumpRead(t.rec, versionOf(ver)))
	return res.Body
}

// sysField is a system field (or the id) an update sends back: the value sent and the record's.
type sysField struct {
	name, sent, has string
}

// update is one update as the model reads it: the fields sent (with the values to compare), system fields,
// the comment, and anything else the manual refuses.
type update struct {
	fields  []sentField
	sys     []sysField
	comment *string
	problem string // a reason for 400 besides values and system fields
	status  int    // the status of a body refused as a whole (400, 415), or 0
}

// expectUpdate is the status the manual gives an update of t in version ver, with the reason.
func (r *run) expectUpdate(t target, ver string, u update) (int, string) {
	if t.rec != nil && t.rec.kind.custom && ver != "/api2" {
		return 404, "custom objects need version 2"
	}
	if !t.live() {
		return 404, t.missing()
	}
	if u.status != 0 {
		return u.status, u.problem
	}
	if u.problem != "" {
		return 400, u.problem
	}
	for _, s := range u.sys {
		if s.sent != s.has {
			return 400, s.name + " " + s.sent + " is not the record's " + s.has
		}
	}
	for _, s := range u.fields {
		if !s.w.valid {
			return 400, s.f.Name() + " is not valid"
		}
		if s.f.Required && s.w.canon == "" && !(s.w.v1 && s.w.raw == textareaPlain(t.rec.values[s.f.ID])) {
			return 400, s.f.Name() + " is required"
		}
	}
	return 200, "a valid update"
}

// apply applies a successful update to the model: changed values with their history, and a new version when
// something changed or a new comment came (docs/api.md, PUT).
func (r *run) apply(rec *mRecord, u update) {
	var changed []sentField
	newValues := map[int64]string{}
	for _, s := range u.fields {
		old := rec.values[s.f.ID]
		if s.w.v1 && s.w.raw == textareaPlain(old) {
			continue // the version-1 read of the stored HTML: kept as it is
		}
		if s.w.canon != old {
			changed = append(changed, s)
			newValues[s.f.ID] = s.w.canon
		}
	}
	c := ""
	if u.comment != nil {
		c = *u.comment
	}
	if len(changed) == 0 && (c == "" || c == rec.comment) {
		return // nothing changes: no version
	}
	rec.version++
	rec.updated, rec.updBy, rec.comment = r.now, r.who.id, c
	for _, s := range changed {
		rec.history[s.f.ID] = append(rec.history[s.f.ID], core.Change{FieldID: s.f.ID, UserID: r.who.id, Time: r.now,
			Old: rec.values[s.f.ID], New: newValues[s.f.ID]})
		rec.values[s.f.ID] = newValues[s.f.ID]
	}
}

// put sends an update body and checks its status and, through a read, its effect.
func (r *run) put(k *mKind, t target, ver, body string, u update) {
	r.t.Helper()
	want, why := r.expectUpdate(t, ver, u)
	res := r.do("PUT", r.path(ver, k, t.idText()), body)
	r.expect(res, want, why)
	if want == 200 {
		r.apply(t.rec, u)
	}
	if t.live() && r.chance(70) {
		r.read(k, t, pick(r, []string{"/api2", ver}))
	}
}

// opUpdate sends a partial update: a few fields, now and then the version_number (current or stale), the
// other system fields, a comment, or something the manual refuses.
func (r *run) opUpdate() {
	k := r.pickKind()
	t := r.pickTarget(k, 92)
	ver := r.pickVersion(k)
	var u update
	var parts []string
	n := 1 + r.rng.Intn(min(4, len(k.fields)))
	commentOnly := !k.custom && r.chance(8)
	if commentOnly {
		n = 0
	}
	for _, i := range r.rng.Perm(len(k.fields))[:n] {
		f := k.fields[i]
		w := r.genValue(f, versionOf(ver))
		if !t.live() && (!w.valid || f.Required && w.canon == "") {
			continue // a missing record is 404 whatever the body holds; keep the body valid to say only that
		}
		u.fields = append(u.fields, sentField{f, w})
		parts = append(parts, fieldXML(f.Name(), w.elem))
	}
	if t.live() {
		rec := t.rec
		if r.chance(35) {
			v := rec.version
			if !r.chance(60) {
				v = pick(r, []int64{v - 1, v + 1, v + 2, 0}) // stale, or never given
			}
			s := strconv.FormatInt(v, 10)
			u.sys = append(u.sys, sysField{"version_number", s, strconv.FormatInt(rec.version, 10)})
			parts = append(parts, fieldXML("version_number", "<value>"+r.pad(s)+"</value>"))
		}
		if r.chance(10) {
			name, v := "created_time", rec.created
			switch r.rng.Intn(3) {
			case 0:
				name, v = "created_by", rec.createdBy
				if k.custom {
					name, v = "last_updated_time", rec.updated
				}
			case 1:
				name, v = "id", rec.id
			}
			has := strconv.FormatInt(v, 10)
			if !r.chance(75) {
				v += 1 + int64(r.rng.Intn(3))
			}
			s := strconv.FormatInt(v, 10)
			if name == "id" && r.chance(25) {
				s = "0" + has // the record's id with a leading zero is not its id
			}
			u.sys = append(u.sys, sysField{name, s, has})
			parts = append(parts, fieldXML(name, "<value>"+s+"</value>"))
		}
		if k.custom && r.bad && r.chance(8) {
			// A custom object's record has no created_by or last_updated_by: unknown fields there.
			name := pick(r, []string{"created_by", "last_updated_by"})
			parts = append(parts, fieldXML(name, "<value>"+strconv.FormatInt(rec.createdBy, 10)+"</value>"))
			u.problem = name + " is an unknown field of a custom object"
		}
		if r.chance(4) {
			switch p := pick(r, []string{"unknown field", "duplicate field", "empty body"}); p {
			case "unknown field":
				parts = append(parts, fieldXML("field_9"+strconv.Itoa(r.rng.Intn(9)), "<value>1</value>"))
				u.problem = p
			case "duplicate field":
				if len(parts) > 0 {
					parts = append(parts, parts[0])
					u.problem = p
				}
			case "empty body":
				parts, u = nil, update{problem: "the body names no field to update"}
			}
		}
	}
	customComment := k.custom && r.bad && r.chance(8)
	if (!k.custom && (commentOnly || r.chance(25)) || customComment) && (u.problem != "the body names no field to update") {
		c, ok := r.comment()
		if t.live() && r.chance(30) {
			c, ok = t.rec.comment, true // the current comment: no new version by itself
		}
		if !ok && u.problem == "" {
			u.problem = "version_comment is longer than 30000 characters"
		}
		if customComment && u.problem == "" {
			u.problem = "version_comment is an unknown field of a custom object"
		}
		u.comment = &c
		parts = append(parts, fieldXML("version_comment", textElem(r, c)))
	}
	if len(parts) == 0 && u.problem == "" {
		u.problem = "the body names no field to update"
	}
	r.rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	r.op = fmt.Sprintf("update %s %s %s", ver, k.seg, t.idText())
	body := recordBody(k.root, parts)
	if t.live() {
		var status int
		var spoiled string
		if body, status, spoiled = r.writeBody(k, parts); status != 0 {
			u.status, u.problem = status, spoiled
		}
	}
	r.put(k, t, ver, body, u)
}

// opSendBack reads a record and sends the read back: unchanged (no new version), or with a few values or the
// comment edited (read, modify, write). The read is kept, to be sent back later by opStale.
func (r *run) opSendBack() {
	k := r.pickKind()
	t := r.pickTarget(k, 100)
	if !t.live() {
		return
	}
	ver := "/api2"
	if !k.custom {
		ver = pick(r, []string{"/api", "/api2"})
	}
	r.op = fmt.Sprintf("read and send back %s %s %d", ver, k.seg, t.rec.id)
	body := r.read(k, t, ver)
	t.rec.snap = &snapshot{ver: ver, body: body, version: t.rec.version}
	switch n := r.rng.Intn(10); {
	case n < 4:
		r.op += " unchanged"
		r.put(k, t, ver, body, update{})
	case n < 9:
		r.op += " edited"
		r.sendEdited(k, t, ver, body, true)
	}
}

// opStale sends back, edited, a read kept from an earlier operation: refused (400) when the record has a
// newer version since (its version_number is not the record's), applied when not.
func (r *run) opStale() {
	k := r.pickKind()
	var snaps []*mRecord
	for _, rec := range k.recs {
		if rec.snap != nil {
			snaps = append(snaps, rec)
		}
	}
	if len(snaps) == 0 {
		return
	}
	rec := pick(r, snaps)
	s := rec.snap
	r.op = fmt.Sprintf("send back a read of %s %s %d at version %d (the record has %d)", s.ver, k.seg, rec.id, s.version, rec.version)
	r.sendEdited(k, target{rec: rec, id: rec.id}, s.ver, s.body, s.version == rec.version)
}

// sendEdited edits one to three values (and maybe the comment) of a record read and PUTs it; current says
// whether the read shows the record's current version.
func (r *run) sendEdited(k *mKind, t target, ver, body string, current bool) {
	u := update{}
	if !current {
		u.sys = append(u.sys, sysField{"version_number", strconv.FormatInt(t.rec.snap.version, 10), strconv.FormatInt(t.rec.version, 10)})
	}
	for _, i := range r.rng.Perm(len(k.fields))[:1+r.rng.Intn(min(3, len(k.fields)))] {
		f := k.fields[i]
		w := r.genValue(f, versionOf(ver))
		var ok bool
		if body, ok = replaceValue(body, f.Name(), w.elem); !ok {
			r.fail("the read has no field %s to edit:\n%s", f.Name(), body)
		}
		u.fields = append(u.fields, sentField{f, w})
	}
	if !k.custom {
		// The read's comment is sent along: it becomes the new version's comment unless replaced.
		c := t.rec.comment
		if current && r.chance(40) {
			var ok, found bool
			if c, ok = r.comment(); !ok {
				u.problem = "version_comment is longer than 30000 characters"
			}
			if body, found = replaceValue(body, "version_comment", textElem(r, c)); !found {
				r.fail("the read has no version_comment:\n%s", body)
			}
		}
		if !current {
			c = "" // not applied anyway
		}
		u.comment = &c
	}
	r.put(k, t, ver, body, u)
}

// replaceValue replaces the <value> element of field name in a record read (one element a line) with elem.
func replaceValue(body, name, elem string) (string, bool) {
	i := strings.Index(body, "<name>"+name+"</name>")
	if i < 0 {
		return body, false
	}
	start := strings.Index(body[i:], "\n<value")
	if start < 0 {
		return body, false
	}
	start += i + 1
	end := -1
	for _, next := range []string{"\n<value_plaintext", "\n<list_type>", "\n<sort", "\n<prefix>"} {
		if j := strings.Index(body[start:], next); j >= 0 && (end < 0 || j < end) {
			end = j
		}
	}
	if end < 0 {
		return body, false
	}
	return body[:start] + elem + body[start+end:], true
}

// opDelete deletes a record: 200, then 409 for a deleted one, 404 for one never created.
func (r *run) opDelete() {
	k := r.pickKind()
	t := r.pickTarget(k, 75)
	ver := r.pickVersion(k)
	r.op = fmt.Sprintf("delete %s %s %s", ver, k.seg, t.idText())
	res := r.do("DELETE", r.path(ver, k, t.idText()), "")
	switch {
	case k.custom && ver != "/api2":
		r.expect(res, 404, "custom objects need version 2")
		return
	case t.rec == nil:
		r.expect(res, 404, t.missing())
		return
	case t.rec.deleted != 0:
		r.expect(res, 409, "the record is already deleted")
		return
	}
	r.expect(res, 200, "a live record")
	t.rec.deleted = r.now
	if r.chance(50) {
		r.read(k, t, pick(r, []string{"/api2", ver}))
	}
}

// opHistory reads the field history of a field of a record, mostly one that has changes.
func (r *run) opHistory() {
	k := r.pickKind()
	t := r.pickTarget(k, 88)
	f := pick(r, k.fields)
	if t.rec != nil && r.chance(70) {
		var changed []core.Field
		for _, g := range k.fields {
			if len(t.rec.history[g.ID]) > 0 {
				changed = append(changed, g)
			}
		}
		if len(changed) > 0 {
			f = pick(r, changed)
		}
	}
	fieldID := strconv.FormatInt(f.ID, 10)
	foreign := r.chance(4)
	if foreign {
		fieldID = pick(r, []string{"999", "0", strconv.FormatInt(r.kinds[(slices.Index(r.kinds, k)+1)%len(r.kinds)].fields[0].ID, 10),
			"0" + fieldID}) // a field id with a leading zero names no field
	}
	ver := r.v2Path()
	r.op = fmt.Sprintf("field history of %s %s field %s", k.seg, t.idText(), fieldID)
	res := r.do("GET", r.path(ver, k, t.idText(), "fieldhistory", fieldID), "")
	switch {
	case ver != "/api2":
		r.expect(res, 404, "field history is a version-2 endpoint")
		return
	case foreign:
		r.expect(res, 404, "not a field of the kind")
		return
	case !t.live():
		r.expect(res, 404, t.missing())
		return
	}
	r.expect(res, 200, "a live record and a field of its kind")
	got, err := dumpHistoryXML(res.Body)
	if err != nil {
		r.fail("%v", err)
	}
	r.same("the field history of "+f.Name(), got, dumpHistory(f, t.rec.history[f.ID]))
}

// opSearch searches a kind with one or two conditions.
func (r *run) opSearch() {
	k := r.pickKind()
	var conds []mCond
	valid := true
	for range 1 + r.rng.Intn(2) {
		c, ok := r.genCond(k)
		conds = append(conds, c)
		valid = valid && ok
	}
	q := r.query(conds)
	ver := r.v2Path()
	r.op = fmt.Sprintf("search %s?%s", k.seg, q)
	res := r.do("GET", r.path(ver, k, "search")+"?"+q, "")
	if ver != "/api2" {
		r.expect(res, 404, "search is a version-2 endpoint")
		return
	}
	if !valid {
		r.expect(res, 400, "a condition the manual refuses")
		return
	}
	r.expect(res, 200, "valid conditions")
	got, err := dumpSummariesXML(res.Body)
	if err != nil {
		r.fail("%v", err)
	}
	r.same("the search results", got, dumpSummaries("search_results", search(k, conds)))
}

// opView lists a view, or searches within it.
func (r *run) opView() {
	v := pick(r, modelViews)
	k := r.kinds[slices.IndexFunc(r.kinds, func(k *mKind) bool { return k.seg == v.kind })]
	view := search(k, viewConds(v.conds))
	want := view
	ver := r.v2Path()
	viewID := strconv.FormatInt(v.id, 10)
	zero := r.chance(4)
	if zero {
		viewID = "0" + viewID
	}
	path := r.path(ver, k, "view", viewID)
	valid, why := true, ""
	if r.chance(50) {
		// A view search narrows the view: the records of the view that also match every condition. A view
		// lists live records, so a deleted_time condition is refused.
		var conds []mCond
		for range 1 + r.rng.Intn(2) {
			c, ok := r.genCond(k)
			conds = append(conds, c)
			if !ok {
				valid, why = false, "a condition the manual refuses"
			} else if c.attr == "deleted_time" && valid {
				valid, why = false, "a view search takes no deleted_time"
			}
		}
		found := search(k, conds)
		want = slices.DeleteFunc(slices.Clone(view), func(rec *mRecord) bool { return !slices.Contains(found, rec) })
		path += "/search?" + r.query(conds)
	}
	r.op = "view " + path
	res := r.do("GET", path, "")
	if ver != "/api2" {
		r.expect(res, 404, "views are a version-2 endpoint")
		return
	}
	if zero {
		r.expect(res, 404, "a view id with a leading zero names no view")
		return
	}
	if !valid {
		r.expect(res, 400, why)
		return
	}
	r.expect(res, 200, "a view of the kind")
	got, err := dumpSummariesXML(res.Body)
	if err != nil {
		r.fail("%v", err)
	}
	r.same("the view", got, dumpSummaries("view", want))
}

// sweep reads every record the model knows, and every kind's live and deleted records, after the run.
func (r *run) sweep() {
	r.who, r.name = modelUsers[0], "final"
	for _, k := range r.kinds {
		if r.t.Failed() {
			return
		}
		for _, rec := range k.recs {
			r.trace = r.trace[:0]
			r.op = fmt.Sprintf("final read of %s %d", k.seg, rec.id)
			r.read(k, target{rec: rec, id: rec.id}, "/api2")
		}
		for _, q := range []string{"created_time>1000000000", "deleted_time>1000000000"} {
			r.trace = r.trace[:0]
			r.op = "final search " + k.seg + "?" + q
			res := r.do("GET", r.path("/api2", k, "search")+"?"+q, "")
			r.expect(res, 200, "valid conditions")
			got, err := dumpSummariesXML(res.Body)
			if err != nil {
				r.fail("%v", err)
			}
			attr, val, _ := strings.Cut(q, ">")
			r.same("the search results", got, dumpSummaries("search_results", search(k, []mCond{{attr, '>', val}})))
		}
	}
}
