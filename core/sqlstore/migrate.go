package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

type migration struct {
	version int
	name    string
	sql     string
}

// dataSteps are the parts of migrations that SQL cannot do, by migration number: each runs right after the
// migration's SQL, in the same transaction.
var dataSteps = map[int]func(ctx context.Context, tx Tx) error{
	4: indexTextboxes,
}

// loadMigrations returns the migrations of d ordered by number.
func loadMigrations(d *Dialect) ([]migration, error) {
	names, err := fs.Glob(d.Migrations, "*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a number and '_'", name)
		}
		body, err := fs.ReadFile(d.Migrations, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share a number", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// Migrate applies every migration of d newer than the database's schema_version, in one transaction that
// first takes the dialect's lock: processes starting together on one database wait for the first one, then
// find nothing to do.
func Migrate(ctx context.Context, db DB, d *Dialect) error {
	ms, err := loadMigrations(d)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	err = db.Write(ctx, func(tx Tx) error {
		if err := d.lock(ctx, tx, lockMigrate); err != nil {
			return err
		}
		if err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"); err != nil {
			return err
		}
		var cur int
		if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&cur); err != nil {
			return err
		}
		for _, m := range ms {
			if m.version <= cur {
				continue
			}
			if err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if step := dataSteps[m.version]; step != nil {
				if err := step(ctx, tx); err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
			}
			if err := tx.Exec(ctx, "INSERT INTO schema_version (version) VALUES ($1)", m.version); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// SchemaVersion is the schema version of the newest migration of d: what Migrate brings a database to.
func SchemaVersion(d *Dialect) (int, error) {
	ms, err := loadMigrations(d)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return ms[len(ms)-1].version, nil
}
