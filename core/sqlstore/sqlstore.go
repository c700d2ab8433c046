// Package sqlstore is the one implementation of core.Store on a SQL database, shared by the engines
// core/sqlite and core/postgres. An engine opens its driver, adapts it to DB and names its Dialect; everything
// the store does (the records and their history, the search terms and rules, provisioning, the snapshots that
// move accounts between stores, the migrations) is written here once, so the engines cannot disagree.
//
// Queries are written once, with $1, $2, ... placeholders, which both PostgreSQL and SQLite read. The few
// statements that differ between the two are named by the Dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/reqgate/reqgate/core"
)

// Row is one result row; Scan fails with an error matching sql.ErrNoRows when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Querier runs statements: the database outside transactions (reads) or a transaction.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Exec(ctx context.Context, query string, args ...any) error
	// SendBatch runs the statements of b, in order, in as few round trips as the engine can (PostgreSQL
	// pipelines them; SQLite runs them one by one, which costs nothing more in process).
	SendBatch(ctx context.Context, b *Batch) BatchResults
}

// Tx is a transaction.
type Tx interface {
	Querier
	// CopyRows inserts rows of the columns cols into table, the fastest way the engine has (COPY in
	// PostgreSQL, a prepared statement in SQLite).
	CopyRows(ctx context.Context, table string, cols []string, rows [][]any) error
}

// DB is what the store needs of a database; each engine adapts its driver to it.
type DB interface {
	// Querier runs reads outside transactions.
	Querier
	// Write runs fn in a write transaction and commits it. It may run fn again from the start when the
	// database reports a transient conflict, so fn must not keep effects outside the transaction.
	Write(ctx context.Context, fn func(Tx) error) error
	// Snapshot runs fn in a read-only transaction that sees one consistent state of the database.
	Snapshot(ctx context.Context, fn func(Tx) error) error
	// Close closes the database.
	Close() error
}

// Options tune a Store.
type Options struct {
	// CacheMetadata keeps accounts, objects and field definitions in memory, emptied by the store's own
	// Apply and Import. Only a store that is the sole writer of its database may set it: SQLite, whose file
	// one process serves. Replicas on one PostgreSQL database would not see each other's provisioning.
	CacheMetadata bool
}

// Store is a core.Store on a DB. It is safe for concurrent use.
type Store struct {
	db DB
	d  *Dialect
	// cache is nil unless Options.CacheMetadata is set.
	cache *metaCache
	// applyMu keeps record writes out while Apply or Import runs (provisioning) and empties the cache, so that they never
	// index values with field definitions Apply has just replaced (with a cache only: without one, every
	// write reads the definitions inside its own transaction).
	applyMu sync.RWMutex
}

var (
	_ core.Store    = (*Store)(nil)
	_ core.Exporter = (*Store)(nil)
	_ core.Importer = (*Store)(nil)
)

// New returns a Store on db, whose schema Migrate has brought up to date.
func New(db DB, d *Dialect, opt Options) *Store {
	s := &Store{db: db, d: d}
	if opt.CacheMetadata {
		s.cache = &metaCache{}
	}
	return s
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that a read answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping %s store: %w", s.d.Name, err)
	}
	return nil
}

// Empty reports whether no account exists yet.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var any bool
	if err := s.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM accounts)").Scan(&any); err != nil {
		return false, fmt.Errorf("empty: %w", err)
	}
	return !any, nil
}

// notFound maps sql.ErrNoRows (which pgx.ErrNoRows matches too) to core.ErrNotFound and leaves other errors
// alone.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return core.ErrNotFound
	}
	return err
}

// provisioning runs fn (Apply, Import) with record writes held off when the store caches, then empties the
// cache.
func (s *Store) provisioning(fn func() error) error {
	if s.cache == nil {
		return fn()
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	defer s.cache.reset()
	return fn()
}

// recordWrite is the other side of provisioning, taken by record writes; it returns the unlock.
func (s *Store) recordWrite() func() {
	if s.cache == nil {
		return func() {}
	}
	s.applyMu.RLock()
	return s.applyMu.RUnlock
}
