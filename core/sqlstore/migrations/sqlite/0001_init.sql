-- 0001: the initial schema of the core store.
-- Every table is scoped by account_id; ids of users, fields, views and records are the ids the interface shows.

CREATE TABLE accounts (
	id      INTEGER PRIMARY KEY,
	api_key TEXT NOT NULL UNIQUE,
	name    TEXT NOT NULL
);

CREATE TABLE users (
	account_id    INTEGER NOT NULL REFERENCES accounts(id),
	id            INTEGER NOT NULL,
	username      TEXT NOT NULL,
	email         TEXT NOT NULL,
	first_name    TEXT NOT NULL,
	last_name     TEXT NOT NULL,
	status        TEXT NOT NULL,
	deleted       INTEGER NOT NULL DEFAULT 0,
	password_hash BLOB,
	PRIMARY KEY (account_id, id),
	UNIQUE (account_id, username)
);

-- objects holds the built-in kinds (re, ft, uc) of every account and its custom objects.
CREATE TABLE objects (
	account_id    INTEGER NOT NULL REFERENCES accounts(id),
	api_prefix    TEXT NOT NULL,
	unique_id     TEXT NOT NULL,
	name_singular TEXT NOT NULL,
	name_plural   TEXT NOT NULL,
	description   TEXT NOT NULL,
	id_prefix     TEXT NOT NULL,
	custom        INTEGER NOT NULL,
	PRIMARY KEY (account_id, api_prefix)
);

CREATE TABLE fields (
	account_id      INTEGER NOT NULL REFERENCES accounts(id),
	id              INTEGER NOT NULL,
	kind            TEXT NOT NULL,
	label           TEXT NOT NULL,
	type            TEXT NOT NULL,
	special_purpose TEXT NOT NULL,
	required        INTEGER NOT NULL,
	sort            INTEGER NOT NULL,
	help            TEXT NOT NULL,
	default_value   TEXT NOT NULL,
	max_size        INTEGER NOT NULL,
	list_type       TEXT NOT NULL,
	PRIMARY KEY (account_id, id)
);
CREATE INDEX fields_kind ON fields (account_id, kind, sort, id);

CREATE TABLE field_options (
	account_id INTEGER NOT NULL,
	field_id   INTEGER NOT NULL,
	value      INTEGER NOT NULL,
	label      TEXT NOT NULL,
	descr      TEXT NOT NULL,
	sort       INTEGER NOT NULL,
	is_default INTEGER NOT NULL,
	PRIMARY KEY (account_id, field_id, value),
	FOREIGN KEY (account_id, field_id) REFERENCES fields (account_id, id)
);

CREATE TABLE views (
	account_id  INTEGER NOT NULL REFERENCES accounts(id),
	id          INTEGER NOT NULL,
	kind        TEXT NOT NULL,
	name        TEXT NOT NULL,
	description TEXT NOT NULL,
	created_by  INTEGER NOT NULL,
	conditions  TEXT NOT NULL,
	PRIMARY KEY (account_id, id)
);
CREATE INDEX views_kind ON views (account_id, kind, id);

-- records keeps every value of a record in one JSON object (field id -> canonical value) so that a record
-- read is one row. deleted_time is 0 while the record is live.
CREATE TABLE records (
	rid               INTEGER PRIMARY KEY,
	account_id        INTEGER NOT NULL REFERENCES accounts(id),
	kind              TEXT NOT NULL,
	id                INTEGER NOT NULL,
	version           INTEGER NOT NULL,
	created_time      INTEGER NOT NULL,
	created_by        INTEGER NOT NULL,
	last_updated_time INTEGER NOT NULL,
	last_updated_by   INTEGER NOT NULL,
	deleted_time      INTEGER NOT NULL DEFAULT 0,
	version_comment   TEXT NOT NULL,
	vals              TEXT NOT NULL,
	UNIQUE (account_id, kind, id)
);
-- The search indexes end with deleted_time and id where equality is the usual filter, so that a search answers
-- in id order straight from the index.
CREATE INDEX records_created_time      ON records (account_id, kind, created_time);
CREATE INDEX records_last_updated_time ON records (account_id, kind, last_updated_time);
CREATE INDEX records_deleted_time      ON records (account_id, kind, deleted_time, id);
CREATE INDEX records_created_by        ON records (account_id, kind, created_by, deleted_time, id);
CREATE INDEX records_last_updated_by   ON records (account_id, kind, last_updated_by, deleted_time, id);

-- terms indexes the searchable values: each selected option of a picklist (user picklists included) and the
-- lower-cased value of a Textbox, so field conditions are index lookups.
CREATE TABLE terms (
	account_id INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	field_id   INTEGER NOT NULL,
	term       TEXT NOT NULL,
	record_id  INTEGER NOT NULL,
	PRIMARY KEY (account_id, kind, field_id, term, record_id)
) WITHOUT ROWID;

-- history holds one row per changed field per update; seq is the record version the change produced.
CREATE TABLE history (
	account_id INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	record_id  INTEGER NOT NULL,
	field_id   INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	user_id    INTEGER NOT NULL,
	time       INTEGER NOT NULL,
	old        TEXT NOT NULL,
	new        TEXT NOT NULL,
	PRIMARY KEY (account_id, kind, record_id, field_id, seq)
);

-- relationships: type 'parent' means from "Is Parent Of" to; 'related' rows are stored once, with the smaller
-- (kind, id) pair as from.
CREATE TABLE relationships (
	account_id INTEGER NOT NULL,
	from_kind  TEXT NOT NULL,
	from_id    INTEGER NOT NULL,
	to_kind    TEXT NOT NULL,
	to_id      INTEGER NOT NULL,
	type       TEXT NOT NULL,
	PRIMARY KEY (account_id, from_kind, from_id, to_kind, to_id, type)
) WITHOUT ROWID;
CREATE INDEX relationships_to ON relationships (account_id, to_kind, to_id);

-- counters holds the last record id allocated per account and kind.
CREATE TABLE counters (
	account_id INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	last_id    INTEGER NOT NULL,
	PRIMARY KEY (account_id, kind)
) WITHOUT ROWID;
