package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
)

// Account returns the account of apiKey, or core.ErrNotFound.
func (s *Store) Account(ctx context.Context, apiKey string) (core.Account, error) {
	a := core.Account{APIKey: apiKey}
	err := s.pool.QueryRow(ctx, "SELECT id, name FROM accounts WHERE api_key = $1", apiKey).Scan(&a.ID, &a.Name)
	if err != nil {
		return core.Account{}, fmt.Errorf("account %q: %w", apiKey, notFound(err))
	}
	return a, nil
}

const userCols = "id, username, email, first_name, last_name, status, deleted, password_hash"

func scanUser(sc pgx.Row) (core.User, error) {
	var u core.User
	err := sc.Scan(&u.ID, &u.Username, &u.Email, &u.FirstName, &u.LastName, &u.Status, &u.Deleted, &u.PasswordHash)
	return u, err
}

// UserByName returns the user of the account with that username, or core.ErrNotFound.
func (s *Store) UserByName(ctx context.Context, accountID int64, username string) (core.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx,
		"SELECT "+userCols+" FROM users WHERE account_id = $1 AND username = $2", accountID, username))
	if err != nil {
		return core.User{}, fmt.Errorf("user %q: %w", username, notFound(err))
	}
	return u, nil
}

// Users returns every user of the account, ordered by id.
func (s *Store) Users(ctx context.Context, accountID int64) ([]core.User, error) {
	us, err := loadUsers(ctx, s.pool, accountID)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return us, nil
}

func loadUsers(ctx context.Context, q querier, accountID int64) ([]core.User, error) {
	rows, err := q.Query(ctx, "SELECT "+userCols+" FROM users WHERE account_id = $1 ORDER BY id", accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var us []core.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		us = append(us, u)
	}
	return us, rows.Err()
}
