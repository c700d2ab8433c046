package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

// Account returns the account of apiKey, or core.ErrNotFound.
func (s *Store) Account(ctx context.Context, apiKey string) (core.Account, error) {
	if a, ok := s.cache.account(apiKey); ok {
		return a, nil
	}
	gen := s.cache.generation()
	a := core.Account{APIKey: apiKey}
	err := s.r.QueryRowContext(ctx, "SELECT id, name FROM accounts WHERE api_key = ?", apiKey).Scan(&a.ID, &a.Name)
	if err != nil {
		return core.Account{}, fmt.Errorf("account %q: %w", apiKey, notFound(err))
	}
	s.cache.putAccount(gen, a)
	return a, nil
}

const userCols = "id, username, email, first_name, last_name, status, deleted, password_hash"

func scanUser(sc interface{ Scan(...any) error }) (core.User, error) {
	var u core.User
	err := sc.Scan(&u.ID, &u.Username, &u.Email, &u.FirstName, &u.LastName, &u.Status, &u.Deleted, &u.PasswordHash)
	return u, err
}

// UserByName returns the user of the account with that username, or core.ErrNotFound.
func (s *Store) UserByName(ctx context.Context, accountID int64, username string) (core.User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx,
		"SELECT "+userCols+" FROM users WHERE account_id = ? AND username = ?", accountID, username))
	if err != nil {
		return core.User{}, fmt.Errorf("user %q: %w", username, notFound(err))
	}
	return u, nil
}

// Users returns every user of the account, ordered by id.
func (s *Store) Users(ctx context.Context, accountID int64) ([]core.User, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+userCols+" FROM users WHERE account_id = ? ORDER BY id", accountID)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	defer rows.Close()
	var us []core.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("users: %w", err)
		}
		us = append(us, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return us, nil
}

// notFound maps sql.ErrNoRows to core.ErrNotFound and leaves other errors alone.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return core.ErrNotFound
	}
	return err
}
