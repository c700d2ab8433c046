// Package storetracing traces the calls of any core.Store: Wrap returns a core.Store whose every call within a
// traced request is a span "store.<op>", the child of the request's span. Like storemetrics it is one
// decorator, not code in each engine, so the span names are the same whatever the store a process runs.
//
// A call whose context carries no span (start-up provisioning, a readiness ping) makes none: a trace of its
// own would only be noise beside the requests' traces.
package storetracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/core"
)

// Store is a core.Store that traces the calls of the store it wraps.
type Store struct {
	s  core.Store
	tr trace.Tracer
}

var _ core.Store = Store{}

// Wrap returns s traced by tr. Only the core.Store methods are seen: callers that need more of s keep s
// itself for that.
func Wrap(s core.Store, tr trace.Tracer) Store { return Store{s: s, tr: tr} }

// start begins the span of one call, when ctx is within a traced request.
func (t Store) start(ctx context.Context, name string) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	return t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
}

// end ends a span of start. ErrNotFound and ErrConflict are answers, not failures of the store.
func end(sp trace.Span, err error) {
	if sp == nil {
		return
	}
	if err != nil && !errors.Is(err, core.ErrNotFound) && !errors.Is(err, core.ErrConflict) {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "store call failed")
	}
	sp.End()
}

func (t Store) Account(ctx context.Context, apiKey string) (a core.Account, err error) {
	ctx, sp := t.start(ctx, "store.account")
	defer func() { end(sp, err) }()
	return t.s.Account(ctx, apiKey)
}

func (t Store) UserByName(ctx context.Context, accountID int64, username string) (u core.User, err error) {
	ctx, sp := t.start(ctx, "store.user_by_name")
	defer func() { end(sp, err) }()
	return t.s.UserByName(ctx, accountID, username)
}

func (t Store) Users(ctx context.Context, accountID int64) (us []core.User, err error) {
	ctx, sp := t.start(ctx, "store.users")
	defer func() { end(sp, err) }()
	return t.s.Users(ctx, accountID)
}

func (t Store) Objects(ctx context.Context, accountID int64) (os []core.Object, err error) {
	ctx, sp := t.start(ctx, "store.objects")
	defer func() { end(sp, err) }()
	return t.s.Objects(ctx, accountID)
}

func (t Store) Fields(ctx context.Context, accountID int64, kind string) (fs []core.Field, err error) {
	ctx, sp := t.start(ctx, "store.fields")
	defer func() { end(sp, err) }()
	return t.s.Fields(ctx, accountID, kind)
}

func (t Store) Views(ctx context.Context, accountID int64, kind string) (vs []core.View, err error) {
	ctx, sp := t.start(ctx, "store.views")
	defer func() { end(sp, err) }()
	return t.s.Views(ctx, accountID, kind)
}

func (t Store) Record(ctx context.Context, accountID int64, kind string, id int64) (r core.Record, err error) {
	ctx, sp := t.start(ctx, "store.record")
	defer func() { end(sp, err) }()
	return t.s.Record(ctx, accountID, kind, id)
}

func (t Store) CreateRecord(ctx context.Context, accountID int64, rec core.Record) (r core.Record, err error) {
	ctx, sp := t.start(ctx, "store.create_record")
	defer func() { end(sp, err) }()
	return t.s.CreateRecord(ctx, accountID, rec)
}

func (t Store) UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, edit core.Edit) (r core.Record, err error) {
	ctx, sp := t.start(ctx, "store.update_record")
	defer func() { end(sp, err) }()
	return t.s.UpdateRecord(ctx, accountID, kind, id, edit)
}

func (t Store) DeleteRecord(ctx context.Context, accountID int64, kind string, id int64, userID, at int64, check core.Check) (err error) {
	ctx, sp := t.start(ctx, "store.delete_record")
	defer func() { end(sp, err) }()
	return t.s.DeleteRecord(ctx, accountID, kind, id, userID, at, check)
}

func (t Store) Search(ctx context.Context, accountID int64, kind string, conds []core.Condition) (s []core.Summary, err error) {
	ctx, sp := t.start(ctx, "store.search")
	defer func() { end(sp, err) }()
	return t.s.Search(ctx, accountID, kind, conds)
}

func (t Store) Related(ctx context.Context, accountID int64, kind string, id int64) (rs []core.Relation, err error) {
	ctx, sp := t.start(ctx, "store.related")
	defer func() { end(sp, err) }()
	return t.s.Related(ctx, accountID, kind, id)
}

func (t Store) Receipt(ctx context.Context, accountID, userID int64, key string, now int64) (r core.Receipt, err error) {
	ctx, sp := t.start(ctx, "store.receipt")
	defer func() { end(sp, err) }()
	return t.s.Receipt(ctx, accountID, userID, key, now)
}

func (t Store) History(ctx context.Context, accountID int64, kind string, id, fieldID int64) (cs []core.Change, err error) {
	ctx, sp := t.start(ctx, "store.history")
	defer func() { end(sp, err) }()
	return t.s.History(ctx, accountID, kind, id, fieldID)
}

func (t Store) Apply(ctx context.Context, p *core.Provision) (err error) {
	ctx, sp := t.start(ctx, "store.apply")
	defer func() { end(sp, err) }()
	return t.s.Apply(ctx, p)
}

func (t Store) Empty(ctx context.Context) (empty bool, err error) {
	ctx, sp := t.start(ctx, "store.empty")
	defer func() { end(sp, err) }()
	return t.s.Empty(ctx)
}

func (t Store) Ping(ctx context.Context) (err error) {
	ctx, sp := t.start(ctx, "store.ping")
	defer func() { end(sp, err) }()
	return t.s.Ping(ctx)
}

// Close closes the wrapped store; it is not traced.
func (t Store) Close() error { return t.s.Close() }
