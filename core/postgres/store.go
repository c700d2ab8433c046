// Package postgres is the core.Store for scale-out: the core's data in PostgreSQL (github.com/jackc/pgx/v5,
// pgxpool), so that any number of stateless core replicas can share one database. It is core/sqlstore in its
// PostgreSQL dialect; this package opens the pool and adapts pgx to sqlstore.DB, keeping pgx's batches (one
// round trip for the statements of a step) and COPY.
//
// The schema is migrated at Open under a transaction-scoped advisory lock, so replicas starting together never
// race. Correctness under concurrent writers from several processes comes from row locks, not from a single
// writer: record ids come from INSERT ... ON CONFLICT DO UPDATE ... RETURNING on the counters row (the row lock
// serialises allocators), updates and deletes lock their record with SELECT ... FOR UPDATE (READ COMMITTED then
// re-reads the newest committed row), and provisioning holds an advisory lock. Transactions that still fail
// with a serialization failure or a deadlock are retried. Nothing is cached in the process: another replica
// may provision at any time.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/sqlstore"
)

// Store is a core.Store (and a core.Exporter and core.Importer) on one PostgreSQL database. It is safe for
// concurrent use, also by several processes on one database.
type Store struct {
	*sqlstore.Store
	pool *pgxpool.Pool
}

// Pool defaults, used unless the URL sets pool_max_conns and friends.
const (
	defaultMaxConns        = 16
	defaultMaxConnIdleTime = 5 * time.Minute
	defaultMaxConnLifetime = time.Hour
	defaultConnectTimeout  = 10 * time.Second
)

// Open connects to the database named by url (postgres://user:pass@host:port/db?sslmode=...) and migrates its
// schema to the newest version. Pool limits come from the URL's pool_* parameters, else 16 connections.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if !strings.Contains(url, "pool_max_conn_idle_time") {
		cfg.MaxConnIdleTime = defaultMaxConnIdleTime
	}
	if !strings.Contains(url, "pool_max_conn_lifetime") {
		cfg.MaxConnLifetime = defaultMaxConnLifetime
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "reqgate" // names the replicas' sessions in pg_stat_activity
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres store %s: %w", redact(cfg), err)
	}
	d := &db{pool}
	if err := sqlstore.Migrate(ctx, d, sqlstore.PostgreSQL); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store %s: %w", redact(cfg), err)
	}
	registerPool(pool)
	return &Store{Store: sqlstore.New(d, sqlstore.PostgreSQL, sqlstore.Options{}), pool: pool}, nil
}

// redact names the database without its password, for errors.
func redact(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// db is sqlstore.DB on a pool.
type db struct {
	pool *pgxpool.Pool
}

// Close closes the pool; it waits for connections in use to be released.
func (d *db) Close() error {
	unregisterPool(d.pool)
	d.pool.Close()
	return nil
}

// mRetries counts the retried transactions.
var mRetries = metrics.GetOrCreateCounter("reqgate_core_store_tx_retries_total")

// maxAttempts bounds the retries of a transaction that failed with a serialization failure or a deadlock.
const maxAttempts = 5

// Write runs fn in one READ COMMITTED transaction and commits it, retrying the whole transaction when
// PostgreSQL reports a serialization failure (40001) or a deadlock (40P01).
func (d *db) Write(ctx context.Context, fn func(sqlstore.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = pgx.BeginFunc(ctx, d.pool, func(t pgx.Tx) error { return fn(tx{t}) })
		if !retryable(err) {
			return classify(err)
		}
		mRetries.Inc()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt*attempt) * 5 * time.Millisecond):
		}
	}
	return classify(err)
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// Snapshot runs fn in one REPEATABLE READ, read-only transaction, which sees one state even while replicas
// keep writing.
func (d *db) Snapshot(ctx context.Context, fn func(sqlstore.Tx) error) error {
	return classify(pgx.BeginTxFunc(ctx, d.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(t pgx.Tx) error { return fn(tx{t}) }))
}

// The reads outside transactions classify their errors themselves; inside a transaction, Write and Snapshot do.

func (d *db) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r, err := wrapRows(d.pool.Query(ctx, query, args...))
	return r, classify(err)
}

func (d *db) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return classified{d.pool.QueryRow(ctx, query, args...)}
}

func (d *db) Exec(ctx context.Context, query string, args ...any) error {
	_, err := d.pool.Exec(ctx, query, args...)
	return classify(err)
}

func (d *db) SendBatch(ctx context.Context, b *sqlstore.Batch) sqlstore.BatchResults {
	return batchResults{d.pool.SendBatch(ctx, pgxBatch(b))}
}

// classified is a row whose Scan classifies its error.
type classified struct{ pgx.Row }

func (r classified) Scan(dest ...any) error { return classify(r.Row.Scan(dest...)) }

// classify marks an error that says the database cannot be reached, or is shutting down or starting, as
// core.ErrUnavailable, so that the interface answers 503 with Retry-After instead of 500.
func classify(err error) error {
	if err == nil || errors.Is(err, core.ErrUnavailable) || !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", core.ErrUnavailable, err)
}

// unavailable reports errors of reaching the server rather than of the statement: no connection could be
// made or it broke (network errors, timeouts, pgconn's connect errors), or the server said it is shutting
// down, starting or out of connections (SQLSTATE class 08 and 57P01-57P03, 53300).
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" ||
			pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed")
}

// tx is a pgx transaction.
type tx struct {
	tx pgx.Tx
}

func (t tx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return wrapRows(t.tx.Query(ctx, query, args...))
}

func (t tx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

func (t tx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.tx.Exec(ctx, query, args...)
	return err
}

func (t tx) SendBatch(ctx context.Context, b *sqlstore.Batch) sqlstore.BatchResults {
	return batchResults{t.tx.SendBatch(ctx, pgxBatch(b))}
}

// CopyRows inserts the rows with COPY.
func (t tx) CopyRows(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	return err
}

// pgxBatch queues the statements of b in a pgx batch, sent in one round trip.
func pgxBatch(b *sqlstore.Batch) *pgx.Batch {
	pb := &pgx.Batch{}
	b.Each(func(query string, args []any) { pb.Queue(query, args...) })
	return pb
}

type batchResults struct {
	br pgx.BatchResults
}

func (b batchResults) QueryRow() sqlstore.Row { return classified{b.br.QueryRow()} }
func (b batchResults) Query() (sqlstore.Rows, error) {
	r, err := wrapRows(b.br.Query())
	return r, classify(err)
}
func (b batchResults) Close() error { return classify(b.br.Close()) }
func (b batchResults) Exec() error {
	_, err := b.br.Exec()
	return classify(err)
}

// rows gives pgx.Rows the Close of sqlstore.Rows, and classifies the errors of reading them: a query's rows
// arrive after it was sent, so a server that shuts down or a connection that breaks under a query shows first
// in Next and Err, not in Query.
type rows struct {
	pgx.Rows
}

func (r rows) Err() error { return classify(r.Rows.Err()) }

func (r rows) Scan(dest ...any) error { return classify(r.Rows.Scan(dest...)) }

func (r rows) Close() error {
	r.Rows.Close()
	return nil
}

func wrapRows(r pgx.Rows, err error) (sqlstore.Rows, error) {
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}
