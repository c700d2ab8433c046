package postgres

import (
	"context"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

// kindOrder sorts kinds as the interface lists them: re, ft, uc, then custom kinds by api_prefix, compared
// byte by byte (COLLATE "C") as SQLite does, whatever the database's collation.
const kindOrder = `CASE %[1]s WHEN 're' THEN 0 WHEN 'ft' THEN 1 WHEN 'uc' THEN 2 ELSE 3 END, %[1]s COLLATE "C"`

// Objects returns the built-in kinds (re, ft, uc) then the custom objects ordered by api_prefix.
func (s *Store) Objects(ctx context.Context, accountID int64) ([]core.Object, error) {
	os, err := loadObjects(ctx, s.pool, accountID)
	if err != nil {
		return nil, fmt.Errorf("objects: %w", err)
	}
	return os, nil
}

func loadObjects(ctx context.Context, q querier, accountID int64) ([]core.Object, error) {
	rows, err := q.Query(ctx, `SELECT unique_id, api_prefix, name_singular, name_plural, description,
		id_prefix, custom FROM objects WHERE account_id = $1 ORDER BY `+fmt.Sprintf(kindOrder, "api_prefix"), accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var os []core.Object
	for rows.Next() {
		var o core.Object
		if err := rows.Scan(&o.UniqueID, &o.APIPrefix, &o.NameSingular, &o.NamePlural, &o.Description,
			&o.IDPrefix, &o.Custom); err != nil {
			return nil, err
		}
		os = append(os, o)
	}
	return os, rows.Err()
}

// kindExists reports whether the account has the kind.
func kindExists(ctx context.Context, q querier, accountID int64, kind string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx,
		"SELECT EXISTS (SELECT 1 FROM objects WHERE account_id = $1 AND api_prefix = $2)", accountID, kind).Scan(&ok)
	return ok, err
}

// Fields returns the field definitions of a kind ordered by sort, then id, with their options ordered by
// sort, then value. core.ErrNotFound for an unknown kind.
func (s *Store) Fields(ctx context.Context, accountID int64, kind string) ([]core.Field, error) {
	fs, err := loadFields(ctx, s.pool, accountID, kind)
	if err != nil {
		return nil, fmt.Errorf("fields of %q: %w", kind, err)
	}
	return fs, nil
}

func loadFields(ctx context.Context, q querier, accountID int64, kind string) ([]core.Field, error) {
	ok, err := kindExists(ctx, q, accountID, kind)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, core.ErrNotFound
	}
	rows, err := q.Query(ctx, `SELECT id, label, type, special_purpose, required, sort, help, default_value,
		max_size, list_type FROM fields WHERE account_id = $1 AND kind = $2 ORDER BY sort, id`, accountID, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fs := []core.Field{}
	idx := map[int64]int{}
	for rows.Next() {
		f := core.Field{Kind: kind}
		var typ string
		if err := rows.Scan(&f.ID, &f.Label, &typ, &f.SpecialPurpose, &f.Required, &f.Sort, &f.Help,
			&f.DefaultValue, &f.MaxSize, &f.ListType); err != nil {
			return nil, err
		}
		f.Type = core.FieldType(typ)
		idx[f.ID] = len(fs)
		fs = append(fs, f)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	orows, err := q.Query(ctx, `SELECT o.field_id, o.value, o.label, o.descr, o.sort, o.is_default
		FROM field_options o JOIN fields f ON f.account_id = o.account_id AND f.id = o.field_id
		WHERE f.account_id = $1 AND f.kind = $2 ORDER BY o.field_id, o.sort, o.value`, accountID, kind)
	if err != nil {
		return nil, err
	}
	defer orows.Close()
	for orows.Next() {
		var fid int64
		var o core.Option
		if err := orows.Scan(&fid, &o.Value, &o.Label, &o.Desc, &o.Sort, &o.Default); err != nil {
			return nil, err
		}
		if i, ok := idx[fid]; ok {
			fs[i].Options = append(fs[i].Options, o)
		}
	}
	return fs, orows.Err()
}

// Views returns the views of a kind ordered by id.
func (s *Store) Views(ctx context.Context, accountID int64, kind string) ([]core.View, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, description, created_by, conditions FROM views
		WHERE account_id = $1 AND kind = $2 ORDER BY id`, accountID, kind)
	if err != nil {
		return nil, fmt.Errorf("views of %q: %w", kind, err)
	}
	defer rows.Close()
	vs := []core.View{}
	for rows.Next() {
		v := core.View{Kind: kind}
		if err := rows.Scan(&v.ID, &v.Name, &v.Description, &v.CreatedBy, &v.Conditions); err != nil {
			return nil, fmt.Errorf("views of %q: %w", kind, err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("views of %q: %w", kind, err)
	}
	return vs, nil
}
