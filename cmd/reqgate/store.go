package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/sqlite"
)

// isPostgres reports whether a --db value names a PostgreSQL database rather than a SQLite file.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openStore opens the store a --db value names and applies its migrations.
func openStore(ctx context.Context, dsn string) (core.Store, error) {
	if isPostgres(dsn) {
		return nil, errors.New("store: PostgreSQL is not supported yet")
	}
	st, err := sqlite.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open SQLite store %s: %w", dsn, err)
	}
	return st, nil
}

func runStoreCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reqgate store: not implemented yet")
	return 2
}
