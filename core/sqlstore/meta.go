package sqlstore

import (
	"context"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

// The account's metadata: the account, its users, objects (kinds), fields and views.

// Account returns the account of apiKey, or core.ErrNotFound.
func (s *Store) Account(ctx context.Context, apiKey string) (core.Account, error) {
	var gen uint64
	if s.cache != nil {
		if a, ok := s.cache.account(apiKey); ok {
			return a, nil
		}
		gen = s.cache.generation()
	}
	a := core.Account{APIKey: apiKey}
	err := s.db.QueryRow(ctx, "SELECT id, name FROM accounts WHERE api_key = $1", apiKey).Scan(&a.ID, &a.Name)
	if err != nil {
		return core.Account{}, fmt.Errorf("account %q: %w", apiKey, notFound(err))
	}
	if s.cache != nil {
		s.cache.putAccount(gen, a)
	}
	return a, nil
}

const userCols = "id, username, email, first_name, last_name, status, deleted, password_hash"

func scanUser(sc Row) (core.User, error) {
	var u core.User
	err := sc.Scan(&u.ID, &u.Username, &u.Email, &u.FirstName, &u.LastName, &u.Status, &u.Deleted, &u.PasswordHash)
	return u, err
}

// UserByName returns the user of the account with that username, or core.ErrNotFound.
func (s *Store) UserByName(ctx context.Context, accountID int64, username string) (core.User, error) {
	u, err := scanUser(s.db.QueryRow(ctx,
		"SELECT "+userCols+" FROM users WHERE account_id = $1 AND username = $2", accountID, username))
	if err != nil {
		return core.User{}, fmt.Errorf("user %q: %w", username, notFound(err))
	}
	return u, nil
}

// Users returns every user of the account, ordered by id.
func (s *Store) Users(ctx context.Context, accountID int64) ([]core.User, error) {
	us, err := loadUsers(ctx, s.db, accountID)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return us, nil
}

func loadUsers(ctx context.Context, q Querier, accountID int64) ([]core.User, error) {
	var us []core.User
	err := each(ctx, q, "SELECT "+userCols+" FROM users WHERE account_id = $1 ORDER BY id", []any{accountID},
		func(rows Rows) error {
			u, err := scanUser(rows)
			us = append(us, u)
			return err
		})
	return us, err
}

// kindOrder sorts kinds as the interface lists them: re, ft, uc, then custom kinds by api_prefix (%[2]s: the
// dialect's Bytewise).
const kindOrder = "CASE %[1]s WHEN 're' THEN 0 WHEN 'ft' THEN 1 WHEN 'uc' THEN 2 ELSE 3 END, %[1]s%[2]s"

func (s *Store) kindOrder(col string) string { return fmt.Sprintf(kindOrder, col, s.d.Bytewise) }

// Objects returns the built-in kinds (re, ft, uc) then the custom objects ordered by api_prefix.
func (s *Store) Objects(ctx context.Context, accountID int64) ([]core.Object, error) {
	var gen uint64
	if s.cache != nil {
		if os, ok := s.cache.objectList(accountID); ok {
			return os, nil
		}
		gen = s.cache.generation()
	}
	os, err := s.loadObjects(ctx, s.db, accountID)
	if err != nil {
		return nil, fmt.Errorf("objects: %w", err)
	}
	if s.cache != nil {
		s.cache.putObjects(gen, accountID, os)
	}
	return os, nil
}

func (s *Store) loadObjects(ctx context.Context, q Querier, accountID int64) ([]core.Object, error) {
	var os []core.Object
	err := each(ctx, q, `SELECT unique_id, api_prefix, name_singular, name_plural, description, id_prefix, custom
		FROM objects WHERE account_id = $1 ORDER BY `+s.kindOrder("api_prefix"), []any{accountID}, func(rows Rows) error {
		var o core.Object
		err := rows.Scan(&o.UniqueID, &o.APIPrefix, &o.NameSingular, &o.NamePlural, &o.Description, &o.IDPrefix, &o.Custom)
		os = append(os, o)
		return err
	})
	return os, err
}

const kindExistsSQL = "SELECT EXISTS (SELECT 1 FROM objects WHERE account_id = $1 AND api_prefix = $2)"

// kindExists reports whether the account has the kind.
func kindExists(ctx context.Context, q Querier, accountID int64, kind string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, kindExistsSQL, accountID, kind).Scan(&ok)
	return ok, err
}

// Fields returns the field definitions of a kind ordered by sort, then id, with their options ordered by
// sort, then value. core.ErrNotFound for an unknown kind.
func (s *Store) Fields(ctx context.Context, accountID int64, kind string) ([]core.Field, error) {
	ki, err := s.kindInfo(ctx, accountID, kind)
	if err != nil {
		return nil, fmt.Errorf("fields of %q: %w", kind, err)
	}
	return cloneFields(ki.fields), nil
}

// loadFields reads the fields of a kind with their options (one batch), or core.ErrNotFound.
func loadFields(ctx context.Context, q Querier, accountID int64, kind string) ([]core.Field, error) {
	b := &Batch{}
	b.Queue(kindExistsSQL, accountID, kind)
	b.Queue(`SELECT id, label, type, special_purpose, required, sort, help, default_value, max_size, list_type
		FROM fields WHERE account_id = $1 AND kind = $2 ORDER BY sort, id`, accountID, kind)
	b.Queue(`SELECT o.field_id, o.value, o.label, o.descr, o.sort, o.is_default
		FROM field_options o JOIN fields f ON f.account_id = o.account_id AND f.id = o.field_id
		WHERE f.account_id = $1 AND f.kind = $2 ORDER BY o.field_id, o.sort, o.value`, accountID, kind)
	br := q.SendBatch(ctx, b)
	fs, err := readFields(br, kind)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return fs, err
}

func readFields(br BatchResults, kind string) ([]core.Field, error) {
	var ok bool
	if err := br.QueryRow().Scan(&ok); err != nil {
		return nil, err
	}
	if !ok {
		return nil, core.ErrNotFound
	}
	fs := []core.Field{}
	idx := map[int64]int{}
	if err := eachResult(br, func(rows Rows) error {
		f := core.Field{Kind: kind}
		var typ string
		if err := rows.Scan(&f.ID, &f.Label, &typ, &f.SpecialPurpose, &f.Required, &f.Sort, &f.Help,
			&f.DefaultValue, &f.MaxSize, &f.ListType); err != nil {
			return err
		}
		f.Type = core.FieldType(typ)
		idx[f.ID] = len(fs)
		fs = append(fs, f)
		return nil
	}); err != nil {
		return nil, err
	}
	err := eachResult(br, func(rows Rows) error {
		var fid int64
		var o core.Option
		if err := rows.Scan(&fid, &o.Value, &o.Label, &o.Desc, &o.Sort, &o.Default); err != nil {
			return err
		}
		if i, ok := idx[fid]; ok {
			fs[i].Options = append(fs[i].Options, o)
		}
		return nil
	})
	return fs, err
}

// Views returns the views of a kind ordered by id.
func (s *Store) Views(ctx context.Context, accountID int64, kind string) ([]core.View, error) {
	vs := []core.View{}
	err := each(ctx, s.db, `SELECT id, name, description, created_by, conditions FROM views
		WHERE account_id = $1 AND kind = $2 ORDER BY id`, []any{accountID, kind}, func(rows Rows) error {
		v := core.View{Kind: kind}
		err := rows.Scan(&v.ID, &v.Name, &v.Description, &v.CreatedBy, &v.Conditions)
		vs = append(vs, v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("views of %q: %w", kind, err)
	}
	return vs, nil
}

// each runs a query and calls fn for every row.
func each(ctx context.Context, q Querier, query string, args []any, fn func(Rows) error) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	return scanAll(rows, fn)
}

// eachResult calls fn for every row of the next result of a batch.
func eachResult(br BatchResults, fn func(Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	return scanAll(rows, fn)
}

func scanAll(rows Rows, fn func(Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
