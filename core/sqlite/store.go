// Package sqlite is the embedded default core.Store: one SQLite file (modernc.org/sqlite, pure Go) in WAL mode.
//
// All writes go through one connection that opens its transactions with BEGIN IMMEDIATE, so concurrent writers
// queue instead of failing with "database is locked"; reads use a separate pool of read-only connections, which
// WAL lets run beside the writer. The schema is embedded (migrations/*.sql) and migrated at Open.
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

	"github.com/reqgate/reqgate/core"
)

// tuning: memory-map up to 256 MiB of the file (reads become memory accesses, shared by every connection
// through the OS page cache, instead of a pread per page) and give each connection a 16 MiB page cache.
const tuning = "&_pragma=mmap_size(268435456)&_pragma=cache_size(-16384)"

// Store is a core.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	w     *sql.DB // the single writer connection
	r     *sql.DB // read-only connections
	path  string
	cache metaCache
	// applyMu keeps record writes out while Apply runs and empties the cache, so that they never index
	// values with field definitions Apply has just replaced.
	applyMu sync.RWMutex

	ckpt  *sql.DB       // the background checkpointer's connection
	dirty atomic.Bool   // a write committed since the last checkpoint
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the checkpointer has stopped

	readRecord *sql.Stmt            // the hottest query, prepared once per read connection
	stmts      map[string]*sql.Stmt // writeStatements prepared on the writer (see preparedTx); read-only after Open

	closeOnce sync.Once
	closeErr  error
}

var _ core.Store = (*Store)(nil)

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
	// synchronous=NORMAL in WAL mode: a commit is appended to the WAL file (in the OS page cache) before
	// the call returns, and the WAL is fsynced only at checkpoints. An acknowledged write therefore survives
	// kill -9 of this process (the OS still holds the data), but not a power loss or OS crash, which may
	// lose the last commits (never corrupt the file). That is the durability the contract asks for at a
	// fraction of the cost of synchronous=FULL.
	w, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"+
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=wal_autocheckpoint(20000)"+tuning+
		"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, path: path}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := s.prepareWrites(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"+tuning+"&_query_only=1")
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	n := max(2, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	s.r = r
	if err := r.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if s.readRecord, err = r.PrepareContext(ctx, qRecord); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	ckpt, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	ckpt.SetMaxOpenConns(1)
	s.ckpt, s.stop, s.done = ckpt, make(chan struct{}), make(chan struct{})
	go s.checkpointer()
	return s, nil
}

// checkpointInterval is how often the checkpointer copies committed WAL pages into the database file.
const checkpointInterval = 200 * time.Millisecond

// checkpointer runs WAL checkpoints off the request path. A checkpoint fsyncs, which can take milliseconds on
// a busy disk; done by the writer (SQLite's auto-checkpoint) it would stall the write that crossed the
// threshold. PASSIVE checkpoints never wait for readers or the writer. The writer's own auto-checkpoint stays
// on at 20,000 pages (80 MiB) as a bound on the WAL should this goroutine fall behind.
func (s *Store) checkpointer() {
	defer close(s.done)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if !s.dirty.Swap(false) {
			continue
		}
		if _, err := s.ckpt.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
			slog.Warn("sqlite checkpoint", "path", s.path, "err", err)
		}
	}
}

// Close stops the checkpointer and closes the connections; SQLite checkpoints the WAL into the database file
// when the last one closes. Calling it again returns the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	var errC, errR error
	if s.ckpt != nil {
		close(s.stop)
		<-s.done
		errC = s.ckpt.Close()
	}
	if s.readRecord != nil {
		s.readRecord.Close()
	}
	for _, st := range s.stmts {
		st.Close()
	}
	if s.r != nil {
		errR = s.r.Close()
	}
	errW := s.w.Close()
	if err := errors.Join(errC, errR, errW); err != nil {
		return fmt.Errorf("close sqlite store: %w", err)
	}
	return nil
}

// Ping checks that a read answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping sqlite store: %w", err)
	}
	return nil
}

// Empty reports whether no account exists yet.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var any bool
	if err := s.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM accounts)").Scan(&any); err != nil {
		return false, fmt.Errorf("empty: %w", err)
	}
	return !any, nil
}

// writeTx runs fn in one IMMEDIATE transaction on the writer and commits it.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.dirty.Store(true)
	return nil
}

// execer is what writes need from a transaction: *sql.Tx, or preparedTx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// preparedTx runs statements of a write transaction as statements prepared once on the writer connection
// (the record writes repeat the same few statements; preparing one costs about as much as running it).
type preparedTx struct {
	s  *Store
	tx *sql.Tx
}

func (s *Store) prepared(tx *sql.Tx) preparedTx { return preparedTx{s, tx} }

// stmt returns the statement prepared at Open for query, bound to the transaction, or nil for a query that
// was not prepared. It never prepares: preparing on the writer pool needs its one connection, which the
// transaction holds.
func (p preparedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := p.s.stmts[query]; ok {
		return p.tx.StmtContext(ctx, st)
	}
	return nil
}

// prepareWrites prepares the statements of the record writes on the writer connection (before any
// transaction holds it).
func (s *Store) prepareWrites(ctx context.Context) error {
	s.stmts = map[string]*sql.Stmt{}
	for _, q := range writeStatements {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	return nil
}

func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.tx.ExecContext(ctx, query, args...)
}

func (p preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.tx.QueryRowContext(ctx, query, args...)
}
