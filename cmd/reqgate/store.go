package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/sqlite"
)

// isPostgres reports whether a --db value names a PostgreSQL database rather than a SQLite file.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openStore opens the store a --db value names and applies its migrations: a postgres:// URL opens
// core/postgres, anything else is the path of a SQLite file.
func openStore(ctx context.Context, dsn string) (core.Store, error) {
	if isPostgres(dsn) {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, err // names the database without its password
		}
		return st, nil
	}
	st, err := sqlite.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open SQLite store %s: %w", dsn, err)
	}
	return st, nil
}

// openStoreRetry is openStore for a role's start: a PostgreSQL store that does not answer is tried again with
// backoff until timeout has passed since the first attempt (0: one attempt), so a core that starts before its
// database (a deployment, a reboot) waits for it instead of exiting. Refusals from a database that answered
// (wrong password, no such database, a failed migration) and SQLite errors are returned at once: waiting would
// not change them.
func openStoreRetry(ctx context.Context, dsn string, timeout time.Duration, log *slog.Logger) (core.Store, error) {
	if !isPostgres(dsn) {
		return openStore(ctx, dsn)
	}
	deadline := time.Now().Add(timeout)
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithDeadline(ctx, deadline)
		if timeout <= 0 {
			actx, cancel = context.WithCancel(ctx)
		}
		st, err := openStore(actx, dsn)
		cancel()
		if err == nil {
			if attempt > 1 {
				log.Info("store reachable", "attempts", attempt)
			}
			return st, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait := min(backoff, time.Until(deadline))
		if !unreachable(err) || wait <= 0 {
			if attempt > 1 {
				return nil, fmt.Errorf("store not reachable within store.connect_timeout (%v, %d attempts): %w", timeout, attempt, err)
			}
			return nil, err
		}
		log.Warn("store not reachable, retrying", "attempt", attempt, "retry_in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// unreachable reports whether err says that no PostgreSQL answered (refused, unreachable, not resolvable, timed
// out) or that it cannot take the connection yet (starting up, shutting down, out of connections), as opposed
// to a refusal that retrying would only repeat.
func unreachable(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pe.Code {
		case "57P03", "57P01", "57P02", "53300": // cannot_connect_now, admin_shutdown, crash_shutdown, too_many_connections
			return true
		}
		return false
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

const storeUsage = `Usage:
  reqgate store migrate --db DSN
      Apply the store's migrations and exit (a PostgreSQL URL or a SQLite file path).
  reqgate store copy --from DSN --to DSN [--account KEY ...] [--replace]
      Copy accounts (all of them by default) from one store to another, e.g. from the embedded SQLite
      file to PostgreSQL, or back: users with their password hashes, objects, fields, views, records (deleted ones
      too, with versions and times), field history, relationships and id counters. Each account is
      written in one transaction: all of it or nothing. An account the target already holds is refused
      unless --replace is given, which replaces it in that same transaction.
`

// accountList collects repeated --account flags (a comma-separated value also works).
type accountList []string

func (a *accountList) String() string { return strings.Join(*a, ",") }

func (a *accountList) Set(v string) error {
	for k := range strings.SplitSeq(v, ",") {
		if k = strings.TrimSpace(k); k != "" {
			*a = append(*a, k)
		}
	}
	return nil
}

// runStoreCommand runs `reqgate store migrate|copy`.
func runStoreCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		out := stderr
		if len(args) > 0 {
			out = stdout
		}
		fmt.Fprint(out, storeUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	fs := flag.NewFlagSet("reqgate store "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		db, from, to string
		replace      bool
		keys         accountList
	)
	switch args[0] {
	case "migrate":
		fs.StringVar(&db, "db", "", "store to migrate")
	case "copy":
		fs.StringVar(&from, "from", "", "source store")
		fs.StringVar(&to, "to", "", "target store")
		fs.Var(&keys, "account", "api_key of an account to copy (repeatable; default: all)")
		fs.BoolVar(&replace, "replace", false, "replace accounts the target already holds")
	default:
		fmt.Fprintf(stderr, "reqgate store: unknown subcommand %q\n\n%s", args[0], storeUsage)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, storeUsage)
			return 0
		}
		fmt.Fprintf(stderr, "reqgate store %s: %v\n\n%s", args[0], err, storeUsage)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reqgate store %s: unexpected argument %q\n", args[0], fs.Arg(0))
		return 2
	}
	var err error
	switch args[0] {
	case "migrate":
		if db == "" {
			fmt.Fprintln(stderr, "reqgate store migrate: --db is required")
			return 2
		}
		err = storeMigrate(ctx, db, stdout)
	case "copy":
		if from == "" || to == "" {
			fmt.Fprintln(stderr, "reqgate store copy: --from and --to are required")
			return 2
		}
		if from == to {
			fmt.Fprintln(stderr, "reqgate store copy: --from and --to name the same store")
			return 2
		}
		err = storeCopy(ctx, from, to, keys, replace, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reqgate store %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// storeMigrate opens (and so migrates) the store, then closes it.
func storeMigrate(ctx context.Context, dsn string, stdout io.Writer) error {
	st, err := openStore(ctx, dsn)
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "store migrated")
	return nil
}

// openSource opens the store accounts are copied from. A SQLite source must exist and is opened read-only:
// a mistyped path is refused instead of becoming a new, empty store that copies nothing.
func openSource(ctx context.Context, dsn string) (core.Store, error) {
	if isPostgres(dsn) {
		return openStore(ctx, dsn)
	}
	return sqlite.OpenReadOnly(ctx, dsn)
}

// storeCopy copies the accounts keys (all when empty) from one store to the other, one transaction per
// account, and stops at the first failure (accounts copied before it stay copied).
func storeCopy(ctx context.Context, from, to string, keys []string, replace bool, stdout io.Writer) error {
	src, err := openSource(ctx, from)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer src.Close()
	exp, ok := src.(core.Exporter)
	if !ok {
		return fmt.Errorf("source store %T cannot export accounts", src)
	}
	dst, err := openStore(ctx, to)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer dst.Close()
	imp, ok := dst.(core.Importer)
	if !ok {
		return fmt.Errorf("target store %T cannot import accounts", dst)
	}
	if len(keys) == 0 {
		if keys, err = exp.APIKeys(ctx); err != nil {
			return fmt.Errorf("source: %w", err)
		}
	}
	for _, key := range keys {
		snap, err := exp.Export(ctx, key)
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		if err := imp.Import(ctx, snap, replace); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		deleted := 0
		for _, r := range snap.Records {
			if r.DeletedTime != 0 {
				deleted++
			}
		}
		fmt.Fprintf(stdout, "copied account %q: %d users, %d objects, %d fields, %d views, %d records (%d deleted), "+
			"%d history entries, %d relationships\n", key, len(snap.Users), len(snap.Objects), len(snap.Fields),
			len(snap.Views), len(snap.Records), deleted, len(snap.History), len(snap.Relationships))
	}
	fmt.Fprintf(stdout, "%d account(s) copied\n", len(keys))
	return nil
}
