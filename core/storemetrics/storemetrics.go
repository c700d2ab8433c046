// Package storemetrics measures the calls of any core.Store: Wrap returns a core.Store that records the time
// of every call in reqgate_core_store_seconds{op="..."}. Measuring in one decorator, not in each engine,
// keeps the names the same whatever the store a process runs, so dashboards and alerts do not depend on it.
package storemetrics

import (
	"context"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/core"
)

func op(name string) *metrics.PrometheusHistogram {
	return metrics.GetOrCreatePrometheusHistogram(`reqgate_core_store_seconds{op="` + name + `"}`)
}

// The histograms, one per Store method.
var (
	mPing         = op("ping")
	mEmpty        = op("empty")
	mAccount      = op("account")
	mUserByName   = op("user_by_name")
	mUsers        = op("users")
	mObjects      = op("objects")
	mFields       = op("fields")
	mViews        = op("views")
	mRecord       = op("record")
	mCreateRecord = op("create_record")
	mUpdateRecord = op("update_record")
	mDeleteRecord = op("delete_record")
	mSearch       = op("search")
	mRelated      = op("related")
	mHistory      = op("history")
	mReceipt      = op("receipt")
	mApply        = op("apply")
)

// Store is a core.Store that measures the calls of the store it wraps.
type Store struct {
	s core.Store
}

var _ core.Store = Store{}

// Wrap returns s measured. Only the core.Store methods are seen: callers that need more of s (an exporter,
// an exclusive section) keep s itself for that.
func Wrap(s core.Store) Store { return Store{s} }

func (m Store) Account(ctx context.Context, apiKey string) (core.Account, error) {
	defer mAccount.UpdateDuration(time.Now())
	return m.s.Account(ctx, apiKey)
}

func (m Store) UserByName(ctx context.Context, accountID int64, username string) (core.User, error) {
	defer mUserByName.UpdateDuration(time.Now())
	return m.s.UserByName(ctx, accountID, username)
}

func (m Store) Users(ctx context.Context, accountID int64) ([]core.User, error) {
	defer mUsers.UpdateDuration(time.Now())
	return m.s.Users(ctx, accountID)
}

func (m Store) Objects(ctx context.Context, accountID int64) ([]core.Object, error) {
	defer mObjects.UpdateDuration(time.Now())
	return m.s.Objects(ctx, accountID)
}

func (m Store) Fields(ctx context.Context, accountID int64, kind string) ([]core.Field, error) {
	defer mFields.UpdateDuration(time.Now())
	return m.s.Fields(ctx, accountID, kind)
}

func (m Store) Views(ctx context.Context, accountID int64, kind string) ([]core.View, error) {
	defer mViews.UpdateDuration(time.Now())
	return m.s.Views(ctx, accountID, kind)
}

func (m Store) Record(ctx context.Context, accountID int64, kind string, id int64) (core.Record, error) {
	defer mRecord.UpdateDuration(time.Now())
	return m.s.Record(ctx, accountID, kind, id)
}

func (m Store) CreateRecord(ctx context.Context, accountID int64, rec core.Record) (core.Record, error) {
	defer mCreateRecord.UpdateDuration(time.Now())
	return m.s.CreateRecord(ctx, accountID, rec)
}

func (m Store) UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, edit core.Edit) (core.Record, error) {
	defer mUpdateRecord.UpdateDuration(time.Now())
	return m.s.UpdateRecord(ctx, accountID, kind, id, edit)
}

func (m Store) DeleteRecord(ctx context.Context, accountID int64, kind string, id int64, userID, at int64, check core.Check) error {
	defer mDeleteRecord.UpdateDuration(time.Now())
	return m.s.DeleteRecord(ctx, accountID, kind, id, userID, at, check)
}

func (m Store) Search(ctx context.Context, accountID int64, kind string, conds []core.Condition) ([]core.Summary, error) {
	defer mSearch.UpdateDuration(time.Now())
	return m.s.Search(ctx, accountID, kind, conds)
}

func (m Store) Related(ctx context.Context, accountID int64, kind string, id int64) ([]core.Relation, error) {
	defer mRelated.UpdateDuration(time.Now())
	return m.s.Related(ctx, accountID, kind, id)
}

func (m Store) History(ctx context.Context, accountID int64, kind string, id, fieldID int64) ([]core.Change, error) {
	defer mHistory.UpdateDuration(time.Now())
	return m.s.History(ctx, accountID, kind, id, fieldID)
}

func (m Store) Receipt(ctx context.Context, accountID, userID int64, key string, now int64) (core.Receipt, error) {
	defer mReceipt.UpdateDuration(time.Now())
	return m.s.Receipt(ctx, accountID, userID, key, now)
}

func (m Store) Apply(ctx context.Context, p *core.Provision) error {
	defer mApply.UpdateDuration(time.Now())
	return m.s.Apply(ctx, p)
}

func (m Store) Empty(ctx context.Context) (bool, error) {
	defer mEmpty.UpdateDuration(time.Now())
	return m.s.Empty(ctx)
}

func (m Store) Ping(ctx context.Context) error {
	defer mPing.UpdateDuration(time.Now())
	return m.s.Ping(ctx)
}

// Close closes the wrapped store; it is not measured.
func (m Store) Close() error { return m.s.Close() }
