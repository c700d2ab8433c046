package core

import (
	"context"
	"slices"
)

// Store is the durable state of the core, shaped by what the HTTP layer asks. It is implemented once, by
// core/sqlstore, run by the engines core/sqlite (the embedded default) and core/postgres; both must pass
// core/storetest.
//
// Every method is scoped to one account (accountID from Account). Methods that name a record return
// ErrNotFound when the kind or record does not exist. Writes are atomic: they either fully happen or not at
// all, and an acknowledged write is durable. A record write whose context's deadline passes before it commits
// (while it waits for a lock, say) is rolled back and returns ErrExpired; one whose commit fails after the
// deadline returns ErrInDoubt.
type Store interface {
	// Account returns the account of apiKey, or ErrNotFound.
	Account(ctx context.Context, apiKey string) (Account, error)
	// UserByName returns the user of the account with that username (with its PasswordHash), or ErrNotFound.
	UserByName(ctx context.Context, accountID int64, username string) (User, error)
	// Users returns every user of the account, ordered by id.
	Users(ctx context.Context, accountID int64) ([]User, error)

	// Objects returns the built-in kinds (re, ft, uc, in that order) then the account's custom objects
	// ordered by api_prefix.
	Objects(ctx context.Context, accountID int64) ([]Object, error)
	// Fields returns the field definitions of a kind ordered by sort, then id. ErrNotFound for an unknown kind.
	Fields(ctx context.Context, accountID int64, kind string) ([]Field, error)
	// Views returns the views of a kind ordered by id (empty for a kind without views).
	Views(ctx context.Context, accountID int64, kind string) ([]View, error)

	// Record returns a record, deleted or not (the caller checks DeletedTime), or ErrNotFound.
	Record(ctx context.Context, accountID int64, kind string, id int64) (Record, error)
	// CreateRecord stores a new record: it assigns the next id of the kind (transactionally: ids never
	// collide), version 1, and LastUpdated* = Created*. Values are canonical and already validated.
	CreateRecord(ctx context.Context, accountID int64, rec Record) (Record, error)
	// UpdateRecord applies to a live record the partial update that edit makes of it, in one transaction. edit
	// is given the record as it is stored, locked against every other writer of it (on any engine, from any
	// replica) until the transaction ends, so a check it makes (the version a client read, a value it sends
	// back unchanged) holds when the update is written; an error from edit aborts the update, nothing is
	// written and the error is returned wrapped. When the update makes a new version (Update.Changes), every
	// value in its Values that differs from the stored one is changed and recorded as a Change, the version
	// goes up by one, LastUpdated* are set and the version comment becomes Update.Comment(). An update that
	// changes nothing writes nothing and returns the record as stored. ErrNotFound for a missing or deleted
	// record (edit is not called).
	UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, edit Edit) (Record, error)
	// DeleteRecord soft-deletes a record (sets DeletedTime). ErrNotFound when missing, ErrConflict when it is
	// already deleted. A non-nil check is given the live record as it is stored, locked against every other
	// writer of it until the transaction ends, as UpdateRecord's edit is: an error from it aborts the delete,
	// nothing is written and the error is returned wrapped. A nil check deletes whatever the record holds.
	DeleteRecord(ctx context.Context, accountID int64, kind string, id int64, userID, at int64, check Check) error

	// Receipt returns the live receipt (younger than ReceiptTTL at now) kept under an idempotency key of a
	// user, or ErrNotFound. Writes keep receipts when their context carries one (WithReceipt).
	Receipt(ctx context.Context, accountID, userID int64, key string, now int64) (Receipt, error)

	// Search returns summaries of the records of a kind matching every condition, ordered by id. Without a
	// deleted_time condition only live records match; with one, only deleted records do. Conditions are
	// already checked (CheckConditions).
	Search(ctx context.Context, accountID int64, kind string, conds []Condition) ([]Summary, error)
	// Related returns the live records related to a record, with directions seen from it, ordered by kind
	// (re, ft, uc, then custom kinds by api_prefix) and id. ErrNotFound for a missing or deleted record.
	Related(ctx context.Context, accountID int64, kind string, id int64) ([]Relation, error)
	// History returns the recorded changes of one field of a record, oldest first.
	History(ctx context.Context, accountID int64, kind string, id, fieldID int64) ([]Change, error)

	// Apply provisions accounts from a parsed account file in one transaction: all or nothing, idempotent;
	// seed records and relationships are created when absent, never written over (see AccountSpec).
	Apply(ctx context.Context, p *Provision) error
	// Empty reports whether the store holds no account at all (a new store gets the demo account).
	Empty(ctx context.Context) (bool, error)
	// Ping checks that the store answers (readiness).
	Ping(ctx context.Context) error
	// Close flushes and closes the store.
	Close() error
}

// Edit makes the update of a record from the record as stored (see Store.UpdateRecord). An engine may call
// it more than once, when it retries a transaction the database gave up on, so it must have no effect but
// its result.
type Edit func(stored Record) (Update, error)

// Check decides from the record as stored whether a write of it may go ahead (see Store.DeleteRecord). Like an
// Edit it may be called more than once, so it must have no effect but its result.
type Check func(stored Record) error

// Unconditional is the Edit that applies u whatever the stored record holds: for writers that own the record's
// state (provisioning, tests), never for a client's read-modify-write.
func Unconditional(u Update) Edit {
	return func(Record) (Update, error) { return u, nil }
}

// Update is a partial update of a record.
type Update struct {
	Values         map[int64]string // field id -> canonical value to set ("" clears)
	VersionComment *string          // the comment of the version the update makes; nil: none
	UserID         int64
	Time           int64 // UNIX seconds
}

// Comment is the version comment of the version u makes: a comment belongs to the version that carried it,
// so an update that sends none makes a version without one.
func (u Update) Comment() string {
	if u.VersionComment == nil {
		return ""
	}
	return *u.VersionComment
}

// Changes returns the ids of the fields whose stored value in rec u changes, in ascending order, and whether
// u makes a new version at all: it does when a value changes, or when it carries a comment other than the
// current version's. An update that changes nothing (a record read and sent back unchanged) makes no
// version, so that the version number counts changes. Both stores follow it, so they agree.
func (u Update) Changes(rec Record) (fields []int64, newVersion bool) {
	for id, v := range u.Values {
		if rec.Values[id] != v {
			fields = append(fields, id)
		}
	}
	slices.Sort(fields)
	c := u.Comment()
	return fields, len(fields) > 0 || c != "" && c != rec.VersionComment
}

// Provision is a parsed, validated account file (see core/accounts): what Store.Apply writes. Users,
// views, records and relationships refer to users by username and to records by kind and id, because ids of
// users may be assigned by the store.
type Provision struct {
	Accounts []AccountSpec
}

// AccountSpec provisions one account. Its account, users, objects, fields and views are created or updated
// in place; its records and relationships are seed data, created when absent and never written over, since
// clients own a record once it exists. Nothing it leaves out is deleted.
type AccountSpec struct {
	APIKey        string
	Name          string
	Users         []UserSpec
	Fields        map[string][]Field // built-in kind -> its fields (the standard template when the file has none)
	Objects       []ObjectSpec       // custom objects
	Views         []ViewSpec
	Records       []RecordSpec
	Relationships []RelationshipSpec
}

// UserSpec provisions one user, matched by Username. ID 0 lets the store assign one.
type UserSpec struct {
	User // PasswordHash is already hashed
}

// ObjectSpec provisions one custom object, matched by APIPrefix, with its fields.
type ObjectSpec struct {
	Object
	Fields []Field
}

// ViewSpec provisions one view, matched by ID.
type ViewSpec struct {
	View
	CreatedByUsername string
}

// RecordSpec seeds one record, matched by Kind and ID: created when absent, with the defaults of the fields
// it leaves out (AddDefaults), and left alone when a record of that kind and id exists, live or deleted.
type RecordSpec struct {
	Kind              string
	ID                int64
	CreatedByUsername string
	CreatedTime       int64            // 0: the time of applying
	Values            map[int64]string // canonical
}

// RelationshipSpec links two records. Type "parent": From "Is Parent Of" To; "related": both ways.
type RelationshipSpec struct {
	FromKind string
	FromID   int64
	ToKind   string
	ToID     int64
	Type     string // "parent" | "related"
}

// Condition is one search condition: Attr Op Value. See ParseConditions and CheckConditions.
type Condition struct {
	Attr    string // created_time, last_updated_time, deleted_time, created_by, last_updated_by, or field_<n>
	Op      byte   // '<', '>' or '='
	Value   string // the literal as written (an integer for times and users)
	FieldID int64  // for field_<n>, set by CheckConditions
	Multi   bool   // for field_<n>: the field is a multiple picklist (match records holding the option)
	Int     int64  // the parsed integer for times, users and picklist values
}
