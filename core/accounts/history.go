package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reqgate/reqgate/core"
)

// demoEdit is one update SeedDemoHistory makes: a record, who changes it, and new values by field label.
type demoEdit struct {
	kind    string
	id      int64
	user    string
	comment string
	values  map[string]string // field label -> canonical value
}

// demoEdits give field history an entry of every shape of docs/api.md (Field history): text, HTML, single and multiple
// picklists of options and of users, date, checkbox, number, email and URL. They assume the records as
// demo.yaml seeds them, so that every value really changes.
var demoEdits = []demoEdit{
	{kind: "re", id: 1, user: "demo", comment: "Clearer title; scheduled", values: map[string]string{
		"Title": "Export the requirement list as CSV", "Status": "2"}},
	{kind: "re", id: 1, user: "alice", comment: "Alice takes it over", values: map[string]string{
		"Owner": "3", "Tags": "1,3"}},
	{kind: "re", id: 1, user: "demo", comment: "Scope widened", values: map[string]string{
		"Description": "<p>Customers ask to <b>save</b> the list as <i>CSV</i> or <i>TSV</i>.</p>",
		"Product":     "2", "Status": "3"}},
	{kind: "ft", id: 1, user: "bob", comment: "Scheduled", values: map[string]string{"Status": "2", "Tags": "1"}},
	{kind: "uc", id: 1, user: "alice", values: map[string]string{"Title": "Analyst exports the requirements of this week"}},
	{kind: "risk", id: 1, user: "demo", comment: "Vendor added a second region", values: map[string]string{
		"Due date": "2025-04-30", "Mitigated": "1", "Severity": "2", "Probability": "0.25"}},
	{kind: "risk", id: 1, user: "bob", comment: "Handover to Bob", values: map[string]string{
		"Contact": "ops@reqgate.test", "Reference": "https://status.example.com/idp", "Notes": "Second region live",
		"Impact score": "4", "Mitigation plan": "<p>Fail over to the <b>second</b> region.</p>",
		"Risk owner": "4", "Reviewers": "1,4", "Areas": "1,3"}},
}

// SeedDemoHistory makes a handful of updates to demo records so that field history has entries of every
// shape, and deletes RE-13 so that a deleted_time search finds a record. Call it right after Demo() was
// applied to an empty store: it assumes the seeded values. The changes are dated over the hour before now.
//
// The history is seeded once: when a record it would change is no longer as Demo() seeds it (its version
// is not 1, or it is deleted), the history was seeded before or a client has changed the record since, and
// SeedDemoHistory changes nothing, so that it never writes a change twice nor over a client's.
func SeedDemoHistory(ctx context.Context, st core.Store) error {
	acct, err := st.Account(ctx, DemoAPIKey)
	if err != nil {
		return fmt.Errorf("seed demo history: %w", err)
	}
	if seeded, err := demoChanged(ctx, st, acct.ID); err != nil || seeded {
		return err
	}
	fields := map[string][]core.Field{}
	start := time.Now().Add(-time.Hour).Unix()
	for i, e := range demoEdits {
		fs, ok := fields[e.kind]
		if !ok {
			if fs, err = st.Fields(ctx, acct.ID, e.kind); err != nil {
				return fmt.Errorf("seed demo history: fields of %s: %w", e.kind, err)
			}
			fields[e.kind] = fs
		}
		u, err := st.UserByName(ctx, acct.ID, e.user)
		if err != nil {
			return fmt.Errorf("seed demo history: user %s: %w", e.user, err)
		}
		up := core.Update{Values: map[int64]string{}, UserID: u.ID, Time: start + int64(i)*300}
		if e.comment != "" {
			up.VersionComment = &e.comment
		}
		for label, v := range e.values {
			f, ok := fieldLabelled(fs, label)
			if !ok {
				return fmt.Errorf("seed demo history: %s has no field %q", e.kind, label)
			}
			up.Values[f.ID] = v
		}
		if _, err := st.UpdateRecord(ctx, acct.ID, e.kind, e.id, core.Unconditional(up)); err != nil {
			return fmt.Errorf("seed demo history: update %s %d: %w", e.kind, e.id, err)
		}
	}
	bob, err := st.UserByName(ctx, acct.ID, "bob")
	if err != nil {
		return fmt.Errorf("seed demo history: user bob: %w", err)
	}
	if err := st.DeleteRecord(ctx, acct.ID, demoDeleted.kind, demoDeleted.id, bob.ID, start+int64(len(demoEdits))*300, nil); err != nil {
		return fmt.Errorf("seed demo history: delete %s %d: %w", demoDeleted.kind, demoDeleted.id, err)
	}
	return nil
}

// demoDeleted is the demo record SeedDemoHistory deletes, so that searches on deleted_time find one.
var demoDeleted = recordKey{"re", 13}

// demoChanged reports whether a record SeedDemoHistory changes is missing or no longer as Demo() seeds it.
func demoChanged(ctx context.Context, st core.Store, accountID int64) (bool, error) {
	keys := []recordKey{demoDeleted}
	for _, e := range demoEdits {
		keys = append(keys, recordKey{e.kind, e.id})
	}
	for _, k := range keys {
		r, err := st.Record(ctx, accountID, k.kind, k.id)
		switch {
		case errors.Is(err, core.ErrNotFound):
			return true, nil
		case err != nil:
			return false, fmt.Errorf("seed demo history: %s %d: %w", k.kind, k.id, err)
		case r.Version != 1 || r.DeletedTime != 0:
			return true, nil
		}
	}
	return false, nil
}

func fieldLabelled(fs []core.Field, label string) (core.Field, bool) {
	for _, f := range fs {
		if f.Label == label {
			return f, true
		}
	}
	return core.Field{}, false
}
