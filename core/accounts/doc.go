// Package accounts reads account files (operator contract, "The account file") into a checked
// *core.Provision that core.Store.Apply writes in one transaction, and provides the demo account that an
// empty store gets on `reqgate serve`.
//
// Every refusal is an *Error naming the file, the line and the reason; a refused file changes nothing, because
// nothing is handed to the store until the whole input passed. Rules beyond the contract's own:
//
//   - Unknown keys, duplicate keys, merge keys (<<) and a second YAML document are refused; aliases are
//     followed within a node budget. A file is at most MaxFileBytes.
//   - Several files (LoadFiles), or several entries of one file, with the same api_key are merged into one
//     account: their users, custom objects, views, records and relationships are concatenated and every
//     uniqueness and reference rule then applies to the merged account. A name repeated must be the same, and
//     the fields of a built-in kind come from one entry only.
//   - Field ids are unique across the whole account. A built-in kind the file leaves out gets the standard
//     template with ids 101-106 (re), 201-206 (ft) or 301-306 (uc); if an explicit field of the account uses
//     an id of that block, the kind takes the first free block of 401-406, 501-506, and so on. A field given
//     without id keeps ID 0: the store matches it by label within its kind, or gives it the next free id.
//   - Views and seed records need an id (views are matched by id; records by kind and id), so applying a
//     file twice changes nothing the second time. A seed record is created when absent and never written
//     over (Store.Apply): a record clients updated or deleted stays as they left it. Records and views name
//     their creator by username (created_by); left out, it is the account's first user in the file. An
//     account's name defaults to its api_key.
//   - Seed values go through core.Canonical; the store gives the fields a seed record leaves out their
//     defaults, as on a create through the interface (core.AddDefaults). A multiple picklist takes a YAML
//     list or "1,3"; a user picklist takes user ids or usernames of users whose id the file gives; every
//     required field must have a value.
//   - Relationships name records as PREFIX-<id> (RE, FT, UC, or a custom object's id_prefix; never CO), and
//     link one pair of records once. An end need not exist (the contract's example links RSK-3 without
//     seeding it): the link is stored and shows in related items once that record exists.
//   - Passwords are hashed with bcrypt at BcryptCost (at most 72 bytes, bcrypt's limit).
package accounts
