package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
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
      unless --replace is given, which replaces it in that same transaction. Progress in records goes to
      stderr (a bar on a terminal, a log line every 5s otherwise); stdout gets a line per account and a summary
      with the counts and the time taken.
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

// storeArgs are the flags of `reqgate store migrate|copy`.
type storeArgs struct {
	sub          string // "migrate" or "copy"
	db, from, to string
	replace      bool
	keys         accountList
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
	sa, code := parseStoreArgs(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	var err error
	switch sa.sub {
	case "migrate":
		err = storeMigrate(ctx, sa.db, stdout)
	case "copy":
		err = storeCopy(ctx, sa.from, sa.to, sa.keys, sa.replace, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reqgate store %s: %v\n", sa.sub, err)
		return 1
	}
	return 0
}

// parseStoreArgs reads the flags of the subcommand args[0]. It returns the exit code when the command ends
// here (usage asked for, or refused), or -1.
func parseStoreArgs(args []string, stdout, stderr io.Writer) (*storeArgs, int) {
	sa := &storeArgs{sub: args[0]}
	fs := flag.NewFlagSet("reqgate store "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch args[0] {
	case "migrate":
		fs.StringVar(&sa.db, "db", "", "store to migrate")
	case "copy":
		fs.StringVar(&sa.from, "from", "", "source store")
		fs.StringVar(&sa.to, "to", "", "target store")
		fs.Var(&sa.keys, "account", "api_key of an account to copy (repeatable; default: all)")
		fs.BoolVar(&sa.replace, "replace", false, "replace accounts the target already holds")
	default:
		fmt.Fprintf(stderr, "reqgate store: unknown subcommand %q\n\n%s", args[0], storeUsage)
		return nil, 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, storeUsage)
			return nil, 0
		}
		fmt.Fprintf(stderr, "reqgate store %s: %v\n\n%s", args[0], err, storeUsage)
		return nil, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reqgate store %s: unexpected argument %q\n", args[0], fs.Arg(0))
		return nil, 2
	}
	if msg := sa.missing(); msg != "" {
		fmt.Fprintf(stderr, "reqgate store %s: %s\n", args[0], msg)
		return nil, 2
	}
	return sa, -1
}

// missing says what the subcommand lacks, or "".
func (sa *storeArgs) missing() string {
	switch {
	case sa.sub == "migrate" && sa.db == "":
		return "--db is required"
	case sa.sub == "copy" && (sa.from == "" || sa.to == ""):
		return "--from and --to are required"
	case sa.sub == "copy" && sa.from == sa.to:
		return "--from and --to name the same store"
	}
	return ""
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
// account, and stops at the first failure (accounts copied before it stay copied). It prints a line per
// account and a summary with the counts and the time taken to stdout, and the progress in records to stderr
// (a bar on a terminal, a log line every few seconds otherwise).
func storeCopy(ctx context.Context, from, to string, keys []string, replace bool, stdout, stderr io.Writer) error {
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
	pr := newProgress("copy", stderr, slog.New(slog.NewTextHandler(stderr, nil)))
	if err := copyAccounts(ctx, exp, imp, keys, replace, pr, stdout); err != nil {
		pr.abort() // the error is printed on a line of its own
		return err
	}
	return nil
}

// copyAccounts is storeCopy once both stores are open, reporting to pr.
func copyAccounts(ctx context.Context, exp core.Exporter, imp core.Importer, keys []string, replace bool, pr *progress, stdout io.Writer) error {
	var total copyCounts
	for _, key := range keys {
		snap, err := exp.Export(ctx, key)
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		pr.stage(fmt.Sprintf("copy %q", key), len(snap.Records))
		if err := imp.Import(core.WithProgress(ctx, pr.add), snap, replace); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		n := countSnapshot(snap)
		total.add(n)
		pr.endStage()
		fmt.Fprintf(stdout, "copied account %q: %s\n", key, n)
	}
	elapsed := pr.finish()
	fmt.Fprintf(stdout, "%d account(s) copied in %s (%s records/s): %s\n", len(keys), elapsed.Round(time.Millisecond),
		perSecond(total.records, elapsed), total)
	return nil
}

// copyCounts are the rows of one account, or of all accounts copied.
type copyCounts struct {
	users, objects, fields, views, records, deleted, history, relationships int
}

func countSnapshot(s *core.Snapshot) copyCounts {
	n := copyCounts{users: len(s.Users), objects: len(s.Objects), fields: len(s.Fields), views: len(s.Views),
		records: len(s.Records), history: len(s.History), relationships: len(s.Relationships)}
	for _, r := range s.Records {
		if r.DeletedTime != 0 {
			n.deleted++
		}
	}
	return n
}

func (c *copyCounts) add(o copyCounts) {
	c.users += o.users
	c.objects += o.objects
	c.fields += o.fields
	c.views += o.views
	c.records += o.records
	c.deleted += o.deleted
	c.history += o.history
	c.relationships += o.relationships
}

func (c copyCounts) String() string {
	return fmt.Sprintf("%d users, %d objects, %d fields, %d views, %d records (%d deleted), %d history entries, "+
		"%d relationships", c.users, c.objects, c.fields, c.views, c.records, c.deleted, c.history, c.relationships)
}

// perSecond is n per second of d, as a whole number ("-" when d is zero).
func perSecond(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return strconv.FormatInt(int64(float64(n)/d.Seconds()+0.5), 10)
}
