package postgres

import (
	"database/sql"
	"errors"
	"fmt"
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
