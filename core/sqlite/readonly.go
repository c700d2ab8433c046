package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/reqgate/reqgate/core/sqlstore"
)

// OpenReadOnly opens an existing SQLite store for reading only, as the source of `reqgate store copy`: unlike
// Open it never creates the file or its directory and never migrates, so a mistyped path is an error instead of
// a new, empty store. A file whose schema is older or newer than this binary's is refused (migrate it with
// `reqgate store migrate`, or use the binary that wrote it). Reads (APIKeys, Export and the rest) work;
// writes fail.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite store: bad path %q (empty, or holds '?' or '#')", path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("open sqlite store %s: no such file", path)
	case err != nil:
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("open sqlite store %s: not a regular file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	// mode=ro in a file: URI: SQLite opens the file read-only and fails rather than create it.
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}).String() +
		"&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)" + tuning
	ro, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := checkSchema(ctx, ro); err != nil {
		ro.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	// One handle serves both roles, with no statements prepared and no checkpointer: it never writes.
	d := &db{w: ro, r: ro, path: path} // Close closes it twice, which sql.DB allows
	return &Store{sqlstore.New(d, sqlstore.SQLite, sqlstore.Options{})}, nil
}

// checkSchema refuses a database that is not a reqgate store at this binary's schema version.
func checkSchema(ctx context.Context, db *sql.DB) error {
	want, err := sqlstore.SchemaVersion(sqlstore.SQLite)
	if err != nil {
		return err
	}
	var exists bool
	if err := db.QueryRowContext(ctx,
		"SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version')").Scan(&exists); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if !exists {
		return errors.New("not a reqgate store (no schema_version table)")
	}
	var got int
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&got); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case got < want:
		return fmt.Errorf("schema version %d, this binary's is %d: run reqgate store migrate --db on it first", got, want)
	case got > want:
		return fmt.Errorf("schema version %d is newer than this binary's (%d): use the reqgate that wrote it", got, want)
	}
	return nil
}
