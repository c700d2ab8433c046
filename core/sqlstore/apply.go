package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/reqgate/reqgate/core"
)

// Apply provisions the accounts of p in one transaction: all or nothing, and idempotent.
//
// Matching: accounts by api_key, users by username (a user without id gets max+1, in file order, after the
// users with ids), fields by id (or by kind and label when the id is 0; a new field without id gets max+1),
// options by value, custom objects by api_prefix, views by id, records by kind and id, relationships by
// their two ends and type. Nothing left out of p is deleted.
//
// Seed records are created when absent, as version 1, the fields they leave out getting their defaults as on
// a create through the interface (core.AddDefaults); a record that exists, live or deleted, is never written
// (see ApplyRecord). Relationships are likewise only added. Seed data writes no field history. A record
// created with an explicit id raises the kind's id counter, so created records never take its id.
//
// A reference to an unknown username, kind, field or record is an error naming it, and nothing is written.
func (s *Store) Apply(ctx context.Context, p *core.Provision) error {
	if p == nil {
		return nil
	}
	now := time.Now().Unix()
	err := s.provisioning(func() error {
		return s.db.Write(ctx, func(tx Tx) error {
			// One provisioning at a time across replicas: they all apply the same files at start.
			if err := s.d.lock(ctx, tx, lockApply); err != nil {
				return err
			}
			for i := range p.Accounts {
				a := &p.Accounts[i]
				if err := s.applyAccount(ctx, tx, a, now); err != nil {
					return fmt.Errorf("account %q: %w", a.APIKey, err)
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	return nil
}

// The store's side of core.ApplyAccount.
var _ core.AccountApplier = (*applier)(nil)

// applier carries the state of applying one account.
type applier struct {
	ctx     context.Context
	tx      Tx
	account int64
	apiKey  string
	now     int64                // UNIX seconds, the time of seed records
	users   map[string]int64     // username -> id
	reindex map[string]bool      // kinds whose searchable fields changed type
	kinds   map[string]*seedKind // kind -> its fields, loaded once for the seed records
	live    map[int64]bool       // ids of the account's users not deleted, loaded for the first new seed record
}

func (s *Store) applyAccount(ctx context.Context, tx Tx, a *core.AccountSpec, now int64) error {
	ap := &applier{ctx: ctx, tx: tx, apiKey: a.APIKey, now: now, users: map[string]int64{}, reindex: map[string]bool{},
		kinds: map[string]*seedKind{}}
	return core.ApplyAccount(countingApplier{applier: ap, progress: core.ProgressFunc(ctx)}, a)
}

// countingApplier reports every seed record applied to the progress callback (core.WithProgress).
type countingApplier struct {
	*applier
	progress func(int)
}

func (c countingApplier) ApplyRecord(r core.RecordSpec) error {
	if err := c.applier.ApplyRecord(r); err != nil {
		return err
	}
	c.progress(1)
	return nil
}

// UpsertAccount inserts the account or renames it, and keeps its id for the other steps.
func (ap *applier) UpsertAccount(name string) error {
	if err := ap.tx.QueryRow(ap.ctx, `INSERT INTO accounts (api_key, name) VALUES ($1, $2)
		ON CONFLICT (api_key) DO UPDATE SET name = excluded.name RETURNING id`, ap.apiKey, name).Scan(&ap.account); err != nil {
		return fmt.Errorf("upsert account: %w", err)
	}
	return nil
}

// Reindex rebuilds the search terms of the kinds whose searchable fields changed type.
func (ap *applier) Reindex() error {
	for _, kind := range slices.Sorted(maps.Keys(ap.reindex)) {
		if err := reindexKind(ap.ctx, ap.tx, ap.account, kind); err != nil {
			return err
		}
	}
	return nil
}

func (ap *applier) UpsertObject(o core.Object) error {
	err := ap.tx.Exec(ap.ctx, `INSERT INTO objects (account_id, api_prefix, unique_id, name_singular,
		name_plural, description, id_prefix, custom) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (account_id, api_prefix) DO UPDATE SET name_singular = excluded.name_singular,
		name_plural = excluded.name_plural, description = excluded.description, id_prefix = excluded.id_prefix,
		custom = excluded.custom`,
		ap.account, o.APIPrefix, core.ObjectUniqueID(ap.apiKey, o.APIPrefix), o.NameSingular, o.NamePlural,
		o.Description, o.IDPrefix, o.Custom)
	if err != nil {
		return fmt.Errorf("upsert object %s: %w", o.APIPrefix, err)
	}
	return nil
}

func (ap *applier) ApplyUsers(specs []core.UserSpec) error {
	stored := map[int64]string{}
	rows, err := ap.tx.Query(ap.ctx, "SELECT id, username FROM users WHERE account_id = $1", ap.account)
	if err != nil {
		return fmt.Errorf("users: %w", err)
	}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return fmt.Errorf("users: %w", err)
		}
		stored[id] = name
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("users: %w", err)
	}
	ids, err := core.AssignUserIDs(stored, specs, ap.upsertUser)
	if err != nil {
		return err
	}
	maps.Copy(ap.users, ids)
	return nil
}

func (ap *applier) upsertUser(u core.User, id int64) error {
	status := u.Status
	if status == "" {
		status = "Active"
	}
	var hash any // nil keeps a stored hash
	if len(u.PasswordHash) > 0 {
		hash = u.PasswordHash
	}
	err := ap.tx.Exec(ap.ctx, `INSERT INTO users (account_id, id, username, email, first_name, last_name,
		status, deleted, password_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (account_id, username) DO UPDATE SET id = excluded.id, email = excluded.email,
		first_name = excluded.first_name, last_name = excluded.last_name, status = excluded.status,
		deleted = excluded.deleted, password_hash = COALESCE(excluded.password_hash, users.password_hash)`,
		ap.account, id, u.Username, u.Email, u.FirstName, u.LastName, status, u.Deleted, hash)
	if err != nil {
		return fmt.Errorf("upsert user %q: %w", u.Username, err)
	}
	return nil
}

func (ap *applier) ApplyFields(kind string, fields []core.Field) error {
	for _, f := range fields {
		f.Kind = kind
		var curKind, curType, curList string
		if f.ID == 0 {
			err := ap.tx.QueryRow(ap.ctx, `SELECT id FROM fields WHERE account_id = $1 AND kind = $2 AND label = $3
				ORDER BY id LIMIT 1`, ap.account, kind, f.Label).Scan(&f.ID)
			if errors.Is(err, sql.ErrNoRows) {
				err = ap.tx.QueryRow(ap.ctx, "SELECT COALESCE(MAX(id), 0) + 1 FROM fields WHERE account_id = $1",
					ap.account).Scan(&f.ID)
			}
			if err != nil {
				return fmt.Errorf("field %s %q: %w", kind, f.Label, err)
			}
		}
		err := ap.tx.QueryRow(ap.ctx, "SELECT kind, type, list_type FROM fields WHERE account_id = $1 AND id = $2",
			ap.account, f.ID).Scan(&curKind, &curType, &curList)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("field %d: %w", f.ID, err)
		case curKind != kind:
			return core.Invalid(f.Name(), "field id already used by kind "+curKind)
		case curType != string(f.Type) && (core.Searchable(core.FieldType(curType)) || core.Searchable(f.Type)):
			ap.reindex[kind] = true
		}
		if err := ap.tx.Exec(ap.ctx, `INSERT INTO fields (account_id, id, kind, label, type, special_purpose,
			required, sort, help, default_value, max_size, list_type) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (account_id, id) DO UPDATE SET label = excluded.label, type = excluded.type,
			special_purpose = excluded.special_purpose, required = excluded.required, sort = excluded.sort,
			help = excluded.help, default_value = excluded.default_value, max_size = excluded.max_size,
			list_type = excluded.list_type`,
			ap.account, f.ID, kind, f.Label, string(f.Type), f.SpecialPurpose, f.Required, f.Sort, f.Help,
			f.DefaultValue, f.MaxSize, f.ListType); err != nil {
			return fmt.Errorf("upsert field %d: %w", f.ID, err)
		}
		for _, o := range f.Options {
			if err := ap.tx.Exec(ap.ctx, `INSERT INTO field_options (account_id, field_id, value, label,
				descr, sort, is_default) VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (account_id, field_id, value) DO UPDATE SET label = excluded.label, descr = excluded.descr,
				sort = excluded.sort, is_default = excluded.is_default`,
				ap.account, f.ID, o.Value, o.Label, o.Desc, o.Sort, o.Default); err != nil {
				return fmt.Errorf("upsert option %d of field %d: %w", o.Value, f.ID, err)
			}
		}
	}
	return nil
}

func (ap *applier) user(what, username string) (int64, error) {
	id, ok := ap.users[username]
	if !ok {
		return 0, core.Invalid(what, "unknown username "+strconv.Quote(username))
	}
	return id, nil
}

func (ap *applier) kind(what, kind string) error {
	ok, err := kindExists(ap.ctx, ap.tx, ap.account, kind)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !ok {
		return core.Invalid(what, "unknown kind "+strconv.Quote(kind))
	}
	return nil
}

func (ap *applier) ApplyView(v core.ViewSpec) error {
	what := "views." + strconv.FormatInt(v.ID, 10)
	if v.ID <= 0 {
		return core.Invalid(what, "id must be positive")
	}
	if err := ap.kind(what, v.Kind); err != nil {
		return err
	}
	by, err := ap.user(what+".created_by", v.CreatedByUsername)
	if err != nil {
		return err
	}
	if err := ap.tx.Exec(ap.ctx, `INSERT INTO views (account_id, id, kind, name, description, created_by,
		conditions) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account_id, id) DO UPDATE SET kind = excluded.kind, name = excluded.name,
		description = excluded.description, created_by = excluded.created_by, conditions = excluded.conditions`,
		ap.account, v.ID, v.Kind, v.Name, v.Description, by, v.Conditions); err != nil {
		return fmt.Errorf("upsert view %d: %w", v.ID, err)
	}
	return nil
}

// ApplyRecord creates the seed record r when the store has no record of its kind and id. A record that
// exists, live or deleted, seeded or created through the interface, is left as it is: what clients wrote
// since (values, versions, history, a delete) is theirs, and applying the files again at a restart or a
// reload never takes it back. The record is checked all the same (kind, creator, fields), so a file is
// refused or accepted whatever the store holds.
func (ap *applier) ApplyRecord(r core.RecordSpec) error {
	what := "records." + r.Kind + "-" + strconv.FormatInt(r.ID, 10)
	if r.ID <= 0 {
		return core.Invalid(what, "id must be positive")
	}
	if err := ap.kind(what, r.Kind); err != nil {
		return err
	}
	by, err := ap.user(what+".created_by", r.CreatedByUsername)
	if err != nil {
		return err
	}
	k, err := ap.seedKind(what, r.Kind)
	if err != nil {
		return err
	}
	for fid := range r.Values {
		if !k.ids[fid] {
			return core.Invalid(what, "unknown field field_"+strconv.FormatInt(fid, 10)+" of kind "+r.Kind)
		}
	}
	var exists bool
	if err := ap.tx.QueryRow(ap.ctx, `SELECT EXISTS (SELECT 1 FROM records WHERE account_id = $1 AND kind = $2
		AND id = $3)`, ap.account, r.Kind, r.ID).Scan(&exists); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if exists {
		return nil
	}
	isUser, err := ap.liveUser(what)
	if err != nil {
		return err
	}
	// The values of a record created through the interface: the fields left out get their defaults.
	vals := make(map[int64]string, len(r.Values)+len(k.fields))
	maps.Copy(vals, r.Values)
	if err := core.AddDefaults(k.fields, vals, isUser); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	vals = cleanValues(vals)
	enc, err := encodeValues(vals)
	if err != nil {
		return err
	}
	return ap.insertSeed(what, r, by, k, vals, enc)
}

// seedKind is what seed records need of their kind: its fields, their ids, and its searchable fields.
type seedKind struct {
	fields     []core.Field
	ids        map[int64]bool
	searchable map[int64]core.FieldType
}

// seedKind returns the fields of kind, loaded once for the seed records of the kind.
func (ap *applier) seedKind(what, kind string) (*seedKind, error) {
	if k, ok := ap.kinds[kind]; ok {
		return k, nil
	}
	fields, err := loadFields(ap.ctx, ap.tx, ap.account, kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	k := &seedKind{fields: fields, ids: make(map[int64]bool, len(fields)), searchable: newKindInfo(fields).searchable}
	for _, f := range fields {
		k.ids[f.ID] = true
	}
	ap.kinds[kind] = k
	return k, nil
}

// liveUser reports whether an id is a user of the account who is not deleted (the users a user picklist's
// default may name, as on the interface), loaded once per account, after its users are applied.
func (ap *applier) liveUser(what string) (func(int64) bool, error) {
	if ap.live == nil {
		rows, err := ap.tx.Query(ap.ctx, "SELECT id FROM users WHERE account_id = $1 AND NOT deleted", ap.account)
		if err != nil {
			return nil, fmt.Errorf("%s: users: %w", what, err)
		}
		live := map[int64]bool{}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: users: %w", what, err)
			}
			live[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%s: users: %w", what, err)
		}
		ap.live = live
	}
	return func(id int64) bool { return ap.live[id] }, nil
}

// insertSeed creates the seed record r, which is not stored yet, as its version 1 with values vals (enc
// encoded), created by by at its creation time or else now.
func (ap *applier) insertSeed(what string, r core.RecordSpec, by int64, k *seedKind, vals map[int64]string, enc string) error {
	created := r.CreatedTime
	if created == 0 {
		created = ap.now
	}
	rec := core.Record{Kind: r.Kind, ID: r.ID, Version: 1, CreatedTime: created, CreatedBy: by,
		LastUpdatedTime: created, LastUpdatedBy: by}
	b := &Batch{}
	queueInsertRecord(b, ap.account, rec, enc)
	b.Queue(qRaiseID, ap.account, r.Kind, r.ID)
	queueReindex(b, k.searchable, ap.account, r.Kind, r.ID, nil, vals)
	if err := runBatch(ap.ctx, ap.tx, b); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (ap *applier) ApplyRelationship(r core.RelationshipSpec) error {
	what := fmt.Sprintf("relationships.%s-%d->%s-%d", r.FromKind, r.FromID, r.ToKind, r.ToID)
	if r.Type != "parent" && r.Type != "related" {
		return core.Invalid(what, "type must be parent or related, not "+strconv.Quote(r.Type))
	}
	if r.FromKind == r.ToKind && r.FromID == r.ToID {
		return core.Invalid(what, "a record cannot be related to itself")
	}
	// The records themselves may not exist yet (the contract's example links a record it does not seed):
	// Related joins on live records, so such a link stays hidden until its record is created.
	for _, kind := range []string{r.FromKind, r.ToKind} {
		var ok bool
		if err := ap.tx.QueryRow(ap.ctx, `SELECT EXISTS (SELECT 1 FROM objects WHERE account_id = $1
			AND api_prefix = $2)`, ap.account, kind).Scan(&ok); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !ok {
			return core.Invalid(what, "unknown kind "+strconv.Quote(kind))
		}
	}
	if r.Type == "related" && (r.ToKind < r.FromKind || r.ToKind == r.FromKind && r.ToID < r.FromID) {
		r.FromKind, r.FromID, r.ToKind, r.ToID = r.ToKind, r.ToID, r.FromKind, r.FromID
	}
	if err := ap.tx.Exec(ap.ctx, `INSERT INTO relationships (account_id, from_kind, from_id,
		to_kind, to_id, type) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		ap.account, r.FromKind, r.FromID, r.ToKind, r.ToID, r.Type); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
