// Package postgres is the core.Store for scale-out: the core's data in PostgreSQL (github.com/jackc/pgx/v5,
// pgxpool), so that any number of stateless core replicas can share one database.
//
// The schema mirrors core/sqlite table for table and is migrated at Open under a transaction-scoped advisory
// lock, so replicas starting together never race. Correctness under concurrent writers from several
// processes comes from row locks, not from a single writer: record ids come from
// INSERT ... ON CONFLICT DO UPDATE ... RETURNING on the counters row (the row lock serialises allocators),
// updates and deletes lock their record with SELECT ... FOR UPDATE (READ COMMITTED then re-reads the newest
// committed row), and provisioning holds an advisory lock. Transactions that still fail with a
// serialization failure or a deadlock are retried.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqgate/reqgate/core"
)

// Store is a core.Store on one PostgreSQL database. It is safe for concurrent use, also by several processes
// on one database.
type Store struct {
	pool *pgxpool.Pool
}

var _ core.Store = (*Store)(nil)

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
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store %s: %w", redact(cfg), err)
	}
	registerPool(pool)
	return s, nil
}

// redact names the database without its password, for errors.
func redact(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// Close closes the pool; it waits for connections in use to be released.
func (s *Store) Close() error {
	unregisterPool(s.pool)
	s.pool.Close()
	return nil
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping postgres store: %w", err)
	}
	return nil
}

// Empty reports whether no account exists yet.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var any bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM accounts)").Scan(&any); err != nil {
		return false, fmt.Errorf("empty: %w", err)
	}
	return !any, nil
}

// mRetries counts the retried transactions.
var mRetries = metrics.GetOrCreateCounter("reqgate_core_store_tx_retries_total")

// maxAttempts bounds the retries of a transaction that failed with a serialization failure or a deadlock.
const maxAttempts = 5

// writeTx runs fn in one READ COMMITTED transaction and commits it, retrying the whole transaction when
// PostgreSQL reports a serialization failure (40001) or a deadlock (40P01). fn must therefore be safe to run
// again from the start.
func (s *Store) writeTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
		mRetries.Inc()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt*attempt) * 5 * time.Millisecond):
		}
	}
	return err
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// notFound maps pgx.ErrNoRows to core.ErrNotFound and leaves other errors alone.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return core.ErrNotFound
	}
	return err
}

// querier is what reads need from the pool and from a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}
