package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
)

// Dialect names what differs between the SQL of two databases. Everything else (upserts with ON CONFLICT
// and excluded, RETURNING, ->> on the JSON of values, $n placeholders) both read alike.
type Dialect struct {
	// Name names the engine in errors.
	Name string
	// Migrations holds the schema, one numbered file per step (0001_init.sql, 0002_....sql). A step is never
	// edited once released: changes come as a new file, for every dialect (TestSchemasAgree).
	Migrations fs.FS
	// Lock is the statement that takes a transaction-scoped lock of the key $1, so that processes sharing the
	// database migrate and provision one at a time; empty where the write transaction is exclusive already.
	Lock string
	// ForUpdate ends a SELECT that reads a row the transaction will write, so that concurrent writers of
	// the row wait for each other; empty where the write transaction is exclusive already.
	ForUpdate string
	// Bytewise ends an ORDER BY term to compare text byte by byte, whatever the database's collation.
	Bytewise string
	// PlanHints: the database keeps no statistics about the terms (SQLite), so Search counts the hits of
	// each field condition first and steers its plan with them (see search). Without it the planner has
	// statistics of its own (PostgreSQL) and the counts would only cost round trips.
	PlanHints bool
	// NotIndexed follows a table name to keep its indexes out of the plan (with PlanHints).
	NotIndexed string
}

// Lock keys: arbitrary constants, unique to reqgate.
const (
	lockMigrate int64 = 0x7265716761746501 // "reqgate\x01"
	lockApply   int64 = 0x7265716761746502 // "reqgate\x02"
)

//go:embed migrations
var migrations embed.FS

func sub(dir string) fs.FS {
	f, err := fs.Sub(migrations, dir)
	if err != nil {
		panic(err)
	}
	return f
}

// SQLite is the dialect of SQLite (modernc.org/sqlite), whose writes go through one connection that begins
// its transactions IMMEDIATE: they are exclusive, so nothing needs a lock.
var SQLite = &Dialect{
	Name:       "sqlite",
	Migrations: sub("migrations/sqlite"),
	PlanHints:  true,
	NotIndexed: " NOT INDEXED",
}

// PostgreSQL is the dialect of PostgreSQL, shared by replicas: advisory locks serialise migrating and
// provisioning, row locks the writes of one record, and kinds sort in the "C" collation as in SQLite.
var PostgreSQL = &Dialect{
	Name:       "postgres",
	Migrations: sub("migrations/postgres"),
	Lock:       "SELECT pg_advisory_xact_lock($1)",
	ForUpdate:  " FOR UPDATE",
	Bytewise:   ` COLLATE "C"`,
}

// lock takes the dialect's lock of key in tx.
func (d *Dialect) lock(ctx context.Context, tx Tx, key int64) error {
	if d.Lock == "" {
		return nil
	}
	if err := tx.Exec(ctx, d.Lock, key); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}
