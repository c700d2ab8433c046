package gateway

import (
	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// What a write can change, and so what it invalidates (docs/design.md, "What a write invalidates", gives the
// argument): readScope says which writes make a cached read old, writeOf what a write may have changed. Both
// read the kind and the id from the same normalised route, and an id only as the core reads it (route.ParseID:
// one form per record), so a read and a write of one record always name the same scope.

// readScope is the scope of a cacheable read of rt.
func readScope(rt *route.Route) cache.Scope {
	switch rt.Class {
	case route.Record, route.History:
		if _, ok := route.ParseID(rt.Segments[1]); ok {
			return cache.Scope{Reads: cache.ReadsRecord, Kind: rt.Segments[0], ID: rt.Segments[1]}
		}
		// The core answers 404 to an id it cannot read, and a 404 is never stored; should one be, any record
		// write of the account makes it old.
		return cache.Scope{Reads: cache.ReadsAnyRecord}
	case route.Search, route.View, route.ViewSearch:
		return cache.Scope{Reads: cache.ReadsKind, Kind: rt.Segments[0]}
	case route.Related:
		// Related items show the summaries (title, version, times) of other records, and which records are
		// related is not known here: every record write of the account makes them old.
		return cache.Scope{Reads: cache.ReadsAnyRecord}
	}
	// Field lists, view definitions, users and objects change only with the account files, whose reload
	// purges the account.
	return cache.Scope{Reads: cache.ReadsAccount}
}

// writeOf is what a write to rt may have changed: a record (PUT, DELETE), a new record of a kind (POST), or,
// for a write to any other route or an id the core cannot read, anything of the account.
func writeOf(rt *route.Route) cache.Write {
	switch rt.Class {
	case route.Record:
		if _, ok := route.ParseID(rt.Segments[1]); ok {
			return cache.Write{Account: rt.APIKey, Kind: rt.Segments[0], ID: rt.Segments[1]}
		}
	case route.Collection:
		return cache.Write{Account: rt.APIKey, Kind: rt.Segments[0]}
	}
	return cache.Write{Account: rt.APIKey}
}
