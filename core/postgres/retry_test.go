package postgres

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reqgate/reqgate/core"
)

func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"deadlock", fmt.Errorf("update: %w", &pgconn.PgError{Code: "40P01"}), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"not found", core.ErrNotFound, false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := retryable(tc.err), tc.want; got != want {
				t.Errorf("retryable(%v) = %v, want %v", tc.err, got, want)
			}
		})
	}
}

// TestNoRows checks what core/sqlstore relies on to report core.ErrNotFound: pgx's "no rows" matches
// database/sql's.
func TestNoRows(t *testing.T) {
	if err := fmt.Errorf("scan: %w", pgx.ErrNoRows); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("errors.Is(%v, sql.ErrNoRows) = false", err)
	}
}

// TestClassify: errors of reaching the server are core.ErrUnavailable (503), errors of the statement are not.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", fmt.Errorf("read: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"not found", core.ErrNotFound, false},
	} {
		if got := errors.Is(classify(tc.err), core.ErrUnavailable); got != tc.want {
			t.Errorf("%s: unavailable = %v, want %v", tc.name, got, tc.want)
		}
		if !errors.Is(classify(tc.err), tc.err) {
			t.Errorf("%s: classify lost the error", tc.name)
		}
	}
	if classify(nil) != nil {
		t.Error("classify(nil) != nil")
	}
}
