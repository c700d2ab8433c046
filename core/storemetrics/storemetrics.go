// Package storemetrics holds the latency histograms of the store calls, reqgate_core_store_seconds{op="..."}:
// core/sqlite and core/postgres report under the same names, so dashboards and alerts do not depend on the
// store a process runs.
package storemetrics

import "github.com/VictoriaMetrics/metrics"

func op(name string) *metrics.PrometheusHistogram {
	return metrics.GetOrCreatePrometheusHistogram(`reqgate_core_store_seconds{op="` + name + `"}`)
}

// The histograms, one per Store method (Update with the call's start time).
var (
	Ping         = op("ping")
	Empty        = op("empty")
	Account      = op("account")
	UserByName   = op("user_by_name")
	Users        = op("users")
	Objects      = op("objects")
	Fields       = op("fields")
	Views        = op("views")
	Record       = op("record")
	CreateRecord = op("create_record")
	UpdateRecord = op("update_record")
	DeleteRecord = op("delete_record")
	Search       = op("search")
	Related      = op("related")
	History      = op("history")
	Apply        = op("apply")
)
