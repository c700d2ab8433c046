package postgres

import (
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

func TestNotFound(t *testing.T) {
	if got := notFound(fmt.Errorf("scan: %w", pgx.ErrNoRows)); !errors.Is(got, core.ErrNotFound) {
		t.Errorf("notFound(ErrNoRows) = %v, want core.ErrNotFound", got)
	}
	other := errors.New("boom")
	if got := notFound(other); got != other {
		t.Errorf("notFound(other) = %v, want it unchanged", got)
	}
}
