// Package sqlite is the embedded default core.Store: one SQLite file (modernc.org/sqlite, pure Go) in WAL mode,
// served by core/sqlstore in its SQLite dialect. This package opens the file and adapts database/sql to
// sqlstore.DB.
//
// All writes go through one connection that opens its transactions with BEGIN IMMEDIATE, so concurrent writers
// queue instead of failing with "database is locked"; reads use a separate pool of read-only connections, which
// WAL lets run beside the writer. The store caches account metadata (sqlstore.Options.CacheMetadata): one
// process serves the file. The schema is migrated at Open.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/reqgate/reqgate/core/sqlstore"
	"github.com/reqgate/reqgate/internal/tick"
)

// tuning: memory-map up to 256 MiB of the file (reads become memory accesses, shared by every connection
// through the OS page cache, instead of a pread per page) and give each connection a 16 MiB page cache.
const tuning = "&_pragma=mmap_size(268435456)&_pragma=cache_size(-16384)"

// Store is a core.Store (and a core.Exporter and core.Importer) on one SQLite file. It is safe for concurrent
// use.
type Store struct {
	*sqlstore.Store
}

// Open opens (creating it and its parent directories when missing) the SQLite database at path and migrates
// its schema to the newest version.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite store: bad path %q (empty, or holds '?' or '#')", path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open sqlite store: %w", err)
		}
	}
	d, err := open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	return &Store{sqlstore.New(d, sqlstore.SQLite, sqlstore.Options{CacheMetadata: true})}, nil
}

// db is sqlstore.DB on one file: a writer connection, a pool of readers and a checkpointer.
type db struct {
	w    *sql.DB // the single writer connection
	r    *sql.DB // read-only connections
	path string

	ckpt  *sql.DB       // the background checkpointer's connection
	dirty atomic.Bool   // a write committed since the last checkpoint
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the checkpointer has stopped

	// Statements prepared at Open, by query: the hot reads on the readers, the record writes on the writer
	// (preparing one costs about as much as running it). Read-only after Open.
	reads, writes map[string]*sql.Stmt

	closeOnce sync.Once
	closeErr  error
}

func open(ctx context.Context, path string) (*db, error) {
	// synchronous=NORMAL in WAL mode: a commit is appended to the WAL file (in the OS page cache) before
	// the call returns, and the WAL is fsynced only at checkpoints. An acknowledged write therefore survives
	// kill -9 of this process (the OS still holds the data), but not a power loss or OS crash, which may
	// lose the last commits (never corrupt the file). That is the durability the contract asks for at a
	// fraction of the cost of synchronous=FULL.
	w, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"+
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=wal_autocheckpoint(20000)"+tuning+
		"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	d := &db{w: w, path: path}
	if err := sqlstore.Migrate(ctx, d, sqlstore.SQLite); err != nil {
		w.Close()
		return nil, err
	}
	reads, writes := sqlstore.Statements(sqlstore.SQLite)
	if d.writes, err = prepare(ctx, w, writes); err != nil {
		d.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"+tuning+"&_query_only=1")
	if err != nil {
		d.Close()
		return nil, err
	}
	n := max(2, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	d.r = r
	if err := r.PingContext(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if d.reads, err = prepare(ctx, r, reads); err != nil {
		d.Close()
		return nil, err
	}
	ckpt, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		d.Close()
		return nil, err
	}
	ckpt.SetMaxOpenConns(1)
	d.ckpt, d.stop, d.done = ckpt, make(chan struct{}), make(chan struct{})
	go d.checkpointer()
	return d, nil
}

func prepare(ctx context.Context, pool *sql.DB, queries []string) (map[string]*sql.Stmt, error) {
	stmts := map[string]*sql.Stmt{}
	for _, q := range queries {
		st, err := pool.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		stmts[q] = st
	}
	return stmts, nil
}

// checkpointInterval is how often the checkpointer copies committed WAL pages into the database file.
const checkpointInterval = 200 * time.Millisecond

// checkpointer runs WAL checkpoints off the request path. A checkpoint fsyncs, which can take milliseconds on
// a busy disk; done by the writer (SQLite's auto-checkpoint) it would stall the write that crossed the
// threshold. PASSIVE checkpoints never wait for readers or the writer. The writer's own auto-checkpoint stays
// on at 20,000 pages (80 MiB) as a bound on the WAL should this goroutine fall behind.
func (d *db) checkpointer() {
	defer close(d.done)
	tick.Every(d.stop, checkpointInterval, func() {
		if !d.dirty.Swap(false) {
			return
		}
		if _, err := d.ckpt.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
			slog.Warn("sqlite checkpoint", "path", d.path, "err", err)
		}
	})
}

// Close stops the checkpointer and closes the connections; SQLite checkpoints the WAL into the database file
// when the last one closes. Calling it again returns the first result.
func (d *db) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *db) close() error {
	var errC, errR error
	if d.ckpt != nil {
		close(d.stop)
		<-d.done
		errC = d.ckpt.Close()
	}
	for _, st := range d.reads {
		st.Close()
	}
	for _, st := range d.writes {
		st.Close()
	}
	if d.r != nil {
		errR = d.r.Close()
	}
	errW := d.w.Close()
	if err := errors.Join(errC, errR, errW); err != nil {
		return fmt.Errorf("close sqlite store: %w", err)
	}
	return nil
}

// Write runs fn in one IMMEDIATE transaction on the writer and commits it.
func (d *db) Write(ctx context.Context, fn func(sqlstore.Tx) error) error {
	t, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(conn{t, t, d.writes}); err != nil {
		t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	d.dirty.Store(true)
	return nil
}

// Snapshot runs fn in a read transaction on a reader: a WAL snapshot.
func (d *db) Snapshot(ctx context.Context, fn func(sqlstore.Tx) error) error {
	t, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer t.Rollback()
	return fn(conn{t, t, nil})
}

// Outside transactions the store only reads: on the readers.

func (d *db) reader() conn { return conn{d.r, nil, d.reads} }

func (d *db) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return d.reader().Query(ctx, query, args...)
}

func (d *db) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.reader().QueryRow(ctx, query, args...)
}

func (d *db) Exec(ctx context.Context, query string, args ...any) error {
	return d.reader().Exec(ctx, query, args...)
}

func (d *db) SendBatch(ctx context.Context, b *sqlstore.Batch) sqlstore.BatchResults {
	return sqlstore.SerialBatch(ctx, d, b)
}

// conn runs statements on the readers or in a transaction, as the statements prepared at Open for the queries
// that have one. It never prepares them itself: preparing on the writer pool needs its one connection, which a
// transaction holds.
type conn struct {
	q interface {
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	}
	tx       *sql.Tx // nil outside a transaction
	prepared map[string]*sql.Stmt
}

func (c conn) stmt(ctx context.Context, query string) *sql.Stmt {
	st, ok := c.prepared[query]
	if ok && c.tx != nil {
		return c.tx.StmtContext(ctx, st)
	}
	return st
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.q.QueryContext(ctx, query, args...)
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.q.QueryRowContext(ctx, query, args...)
}

func (c conn) Exec(ctx context.Context, query string, args ...any) error {
	var err error
	if st := c.stmt(ctx, query); st != nil {
		_, err = st.ExecContext(ctx, args...)
	} else {
		_, err = c.q.ExecContext(ctx, query, args...)
	}
	return err
}

func (c conn) SendBatch(ctx context.Context, b *sqlstore.Batch) sqlstore.BatchResults {
	return sqlstore.SerialBatch(ctx, c, b)
}

// CopyRows inserts the rows with one statement prepared in the transaction.
func (c conn) CopyRows(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	ps := make([]string, len(cols))
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	st, err := c.tx.PrepareContext(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES ("+
		strings.Join(ps, ", ")+")")
	if err != nil {
		return fmt.Errorf("insert %s: %w", table, err)
	}
	defer st.Close()
	for _, r := range rows {
		if _, err := st.ExecContext(ctx, r...); err != nil {
			return fmt.Errorf("insert %s: %w", table, err)
		}
	}
	return nil
}
