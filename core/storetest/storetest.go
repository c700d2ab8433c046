// Package storetest is the one test suite every core.Store must pass (core/sqlite, core/postgres). It checks
// the contract written in the doc comments of core.Store: ordering, errors, soft deletes, search semantics,
// relationship directions, field history, provisioning (all or nothing, idempotent) and what must hold under
// concurrent writes (ids never collide, versions never skip or repeat, no change is lost).
//
// Use it from the store's own tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) core.Store { return openTemp(t) })
//	}
package storetest

import (
	"context"
	"testing"

	"github.com/reqgate/reqgate/core"
)

// Run runs the suite. open must return a new, empty store each time it is called; Run closes it when the
// subtest ends.
func Run(t *testing.T, open func(t *testing.T) core.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st core.Store)
	}{
		{"EmptyAndPing", testEmptyAndPing},
		{"Account", testAccount},
		{"Users", testUsers},
		{"Objects", testObjects},
		{"Fields", testFields},
		{"Views", testViews},
		{"SeedRecords", testSeedRecords},
		{"CreateRecord", testCreateRecord},
		{"UpdateRecord", testUpdateRecord},
		{"DeleteRecord", testDeleteRecord},
		{"History", testHistory},
		{"Search", testSearch},
		{"SearchDeleted", testSearchDeleted},
		{"SearchConditionForms", testSearchConditionForms},
		{"SearchWords", testSearchWords},
		{"Related", testRelated},
		{"ApplyIdempotent", testApplyIdempotent},
		{"ApplyUpdatesInPlace", testApplyUpdatesInPlace},
		{"ApplyKeepsExistingRecords", testApplyKeepsExistingRecords},
		{"ApplySeedDefaults", testApplySeedDefaults},
		{"ApplyAllOrNothing", testApplyAllOrNothing},
		{"ApplyErrors", testApplyErrors},
		{"ApplyDanglingRelationship", testApplyDanglingRelationship},
		{"AccountsAreSeparate", testAccountsAreSeparate},
		{"ParallelCreates", testParallelCreates},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ConcurrentEdits", testConcurrentEdits},
		{"EditRefuses", testEditRefuses},
		{"CheckRefusesDelete", testCheckRefusesDelete},
		{"ConditionalWritersRace", testConditionalWritersRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := open(t)
			t.Cleanup(func() {
				if err := st.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, st)
		})
	}
}

// provisioned returns a store holding Fixture, and the ids of its two accounts.
func provisioned(t *testing.T, st core.Store) (acme, other int64) {
	t.Helper()
	ctx := context.Background()
	if err := st.Apply(ctx, Fixture()); err != nil {
		t.Fatalf("Apply(Fixture): %v", err)
	}
	return accountID(t, st, "acme"), accountID(t, st, "other")
}

func accountID(t *testing.T, st core.Store, apiKey string) int64 {
	t.Helper()
	a, err := st.Account(context.Background(), apiKey)
	if err != nil {
		t.Fatalf("Account(%q): %v", apiKey, err)
	}
	return a.ID
}

// Field ids of the fixture.
const (
	reTitle    = 101
	reDesc     = 102
	reStatus   = 103
	reOwner    = 104
	rePlatform = 105
	reEstimate = 106
	ftTitle    = 201
	ftStatus   = 202
	ucTitle    = 301
	riskTitle  = 401
	riskSev    = 402
)

// Seed times of the fixture.
const (
	t1 = 1_700_000_000
	t2 = 1_700_000_100
	t3 = 1_700_000_200
)

func picklist(opts ...string) []core.Option {
	out := make([]core.Option, len(opts))
	for i, label := range opts {
		out[i] = core.Option{Value: int64(i + 1), Label: label, Sort: i + 1}
	}
	return out
}

// Fixture is the provision the suite works on: account "acme" with three users, fields for every built-in
// kind, two custom objects (risk, bug), views, seed records and relationships; and account "other", which
// must stay invisible from acme.
func Fixture() *core.Provision {
	return &core.Provision{Accounts: []core.AccountSpec{
		{
			APIKey: "acme",
			Name:   "Acme Corp",
			Users: []core.UserSpec{
				{User: core.User{Username: "bob", Email: "bob@acme.test", FirstName: "Bob", LastName: "Baker",
					PasswordHash: []byte("hash-bob")}},
				{User: core.User{ID: 5, Username: "alice", Email: "alice@acme.test", FirstName: "Alice",
					LastName: "Archer", PasswordHash: []byte("hash-alice")}},
				{User: core.User{Username: "carol", Email: "carol@acme.test", FirstName: "Carol", Status: "Inactive"}},
			},
			Fields: map[string][]core.Field{
				core.KindRequirement: {
					{ID: reTitle, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title", Required: true,
						Sort: 1, MaxSize: 255},
					{ID: reDesc, Label: "Description", Type: core.TypeTextarea, SpecialPurpose: "desc", Sort: 2},
					{ID: reStatus, Label: "Status", Type: core.TypePickOne, SpecialPurpose: "status", Sort: 3,
						ListType: core.ListNormal, Options: []core.Option{
							{Value: 3, Label: "Accepted - Unscheduled", Sort: 3},
							{Value: 1, Label: "Pending Review", Sort: 1, Default: true},
							{Value: 2, Label: "Accepted - Scheduled", Sort: 2, Desc: "planned"},
						}},
					{ID: reOwner, Label: "Owner", Type: core.TypePickOne, SpecialPurpose: "owner", Sort: 4,
						ListType: core.ListUser},
					{ID: rePlatform, Label: "Platforms", Type: core.TypePickMultiple, Sort: 5,
						ListType: core.ListNormal, Options: picklist("Web", "iOS", "Android")},
					// Sort 0 puts it first; ties on sort are broken by id.
					{ID: reEstimate, Label: "Estimate", Type: core.TypeInteger, Sort: 0, Help: "days"},
				},
				core.KindFeature: {
					{ID: ftTitle, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title", Sort: 1},
					{ID: ftStatus, Label: "Status", Type: core.TypePickOne, SpecialPurpose: "status", Sort: 1,
						ListType: core.ListNormal, Options: picklist("Open", "Done")},
				},
				core.KindUseCase: {
					{ID: ucTitle, Label: "Name", Type: core.TypeTextbox, SpecialPurpose: "title", Sort: 1},
				},
			},
			Objects: []core.ObjectSpec{
				{Object: core.Object{APIPrefix: "risk", NameSingular: "Risk", NamePlural: "Risks", IDPrefix: "RSK",
					Description: "Project risks"}, Fields: []core.Field{
					{ID: riskTitle, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title", Sort: 1},
					{ID: riskSev, Label: "Severity", Type: core.TypePickOne, Sort: 2, ListType: core.ListNormal,
						Options: picklist("Low", "High")},
				}},
				{Object: core.Object{APIPrefix: "bug", NameSingular: "Bug", NamePlural: "Bugs", IDPrefix: "BUG"}},
			},
			Views: []core.ViewSpec{
				{View: core.View{ID: 13, Kind: core.KindRequirement, Name: "Mine", Conditions: "created_by=5"},
					CreatedByUsername: "bob"},
				{View: core.View{ID: 12, Kind: core.KindRequirement, Name: "Pending review",
					Description: "Everything not yet triaged", Conditions: "field_103=1"}, CreatedByUsername: "alice"},
				{View: core.View{ID: 20, Kind: "risk", Name: "All risks"}, CreatedByUsername: "alice"},
			},
			Records: []core.RecordSpec{
				{Kind: core.KindRequirement, ID: 1, CreatedByUsername: "alice", CreatedTime: t1,
					Values: map[int64]string{reTitle: "Export to CSV", reDesc: "<b>Export</b> the list", reStatus: "1",
						rePlatform: "1,3", reOwner: "6"}},
				{Kind: core.KindRequirement, ID: 2, CreatedByUsername: "bob", CreatedTime: t2,
					Values: map[int64]string{reTitle: "Import", reStatus: "2", rePlatform: "3", reEstimate: ""}},
				{Kind: core.KindRequirement, ID: 4, CreatedByUsername: "alice", CreatedTime: t3,
					Values: map[int64]string{reTitle: "Print", reStatus: "1", rePlatform: "2"}},
				{Kind: core.KindFeature, ID: 7, CreatedByUsername: "bob", CreatedTime: t2,
					Values: map[int64]string{ftTitle: "CSV writer"}},
				{Kind: core.KindUseCase, ID: 3, CreatedByUsername: "carol", CreatedTime: t1,
					Values: map[int64]string{ucTitle: "Export"}},
				{Kind: "risk", ID: 3, CreatedByUsername: "alice", CreatedTime: t1,
					Values: map[int64]string{riskTitle: "Late delivery", riskSev: "2"}},
			},
			Relationships: []core.RelationshipSpec{
				{FromKind: core.KindRequirement, FromID: 1, ToKind: core.KindFeature, ToID: 7, Type: "parent"},
				{FromKind: core.KindRequirement, FromID: 1, ToKind: "risk", ToID: 3, Type: "related"},
				{FromKind: core.KindRequirement, FromID: 2, ToKind: core.KindRequirement, ToID: 1, Type: "parent"},
				{FromKind: core.KindUseCase, FromID: 3, ToKind: core.KindRequirement, ToID: 1, Type: "related"},
				{FromKind: core.KindRequirement, FromID: 4, ToKind: core.KindRequirement, ToID: 1, Type: "related"},
				// Given again, and from the other end: stored once.
				{FromKind: "risk", FromID: 3, ToKind: core.KindRequirement, ToID: 1, Type: "related"},
				{FromKind: core.KindRequirement, FromID: 1, ToKind: core.KindFeature, ToID: 7, Type: "parent"},
			},
		},
		{
			APIKey: "other",
			Name:   "Other Inc",
			Users: []core.UserSpec{
				{User: core.User{ID: 5, Username: "alice", Email: "alice@other.test", FirstName: "Other"}},
			},
			Fields: map[string][]core.Field{
				core.KindRequirement: {
					{ID: reTitle, Label: "Title", Type: core.TypeTextbox, SpecialPurpose: "title", Sort: 1},
				},
			},
			Records: []core.RecordSpec{
				{Kind: core.KindRequirement, ID: 9, CreatedByUsername: "alice", CreatedTime: t1,
					Values: map[int64]string{reTitle: "Other's record"}},
			},
		},
	}}
}
