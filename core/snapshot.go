package core

import "context"

// Snapshot is everything one account holds, in the stores' own terms: what `reqgate store copy` moves from
// one store to another (SQLite to PostgreSQL) without loss. Terms of the search index are not part of it:
// they follow from the records and are rebuilt by the importing store.
type Snapshot struct {
	APIKey        string
	Name          string
	Users         []User           // with their password hashes, ordered by id
	Objects       []Object         // built-in kinds and custom objects
	Fields        []Field          // of every kind, with their options
	Views         []View           // ordered by id
	Records       []Record         // deleted ones included, with their versions and times
	History       []HistoryEntry   // every recorded change
	Relationships []StoredRelation // as stored: parent rows, and related rows once
	Counters      map[string]int64 // kind -> last record id allocated (may exceed the largest id)
}

// HistoryEntry is one stored field change: the Change, the record it belongs to and the version it produced.
type HistoryEntry struct {
	Kind     string
	RecordID int64
	Seq      int64 // the record version the change produced
	Change
}

// StoredRelation is one stored relationship row: Type "parent" (From is parent of To) or "related".
type StoredRelation struct {
	FromKind string
	FromID   int64
	ToKind   string
	ToID     int64
	Type     string
}

// Exporter is a store that can write out whole accounts (both core/sqlite and core/postgres are).
type Exporter interface {
	// APIKeys lists the api_keys of every account, sorted.
	APIKeys(ctx context.Context) ([]string, error)
	// Export reads one account, consistently (one read transaction). ErrNotFound for an unknown api_key.
	Export(ctx context.Context, apiKey string) (*Snapshot, error)
}

// Importer is a store that can take in whole accounts.
type Importer interface {
	// Import writes the account of s in one transaction: all or nothing. When the store already holds an
	// account with that api_key, Import fails with ErrConflict unless replace is set, in which case the old
	// account's data is removed first (in the same transaction).
	Import(ctx context.Context, s *Snapshot, replace bool) error
}
