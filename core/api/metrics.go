package api

import (
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Metrics of the core's HTTP interface, labelled by route class (a path template, never a raw path, so
// the number of series stays small) and status code:
//
//	reqgate_core_requests_total{route="GET /{kind}/{id}",code="200"}
//	reqgate_core_request_seconds{route="GET /{kind}/{id}"}   (Prometheus histogram)
type routeMetrics struct {
	hist   *metrics.PrometheusHistogram
	counts sync.Map // status code -> *metrics.Counter
	route  string
}

var allRouteMetrics sync.Map // "METHOD route" -> *routeMetrics

// knownMethods keeps arbitrary method names out of metric labels.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true}

// observe counts one request and its duration.
func observe(method, route string, code int, start time.Time) {
	if !knownMethods[method] {
		method = "OTHER"
	}
	key := method + " " + route
	v, ok := allRouteMetrics.Load(key)
	if !ok {
		rm := &routeMetrics{
			route: key,
			hist:  metrics.GetOrCreatePrometheusHistogram(`reqgate_core_request_seconds{route="` + key + `"}`),
		}
		v, _ = allRouteMetrics.LoadOrStore(key, rm)
	}
	rm := v.(*routeMetrics)
	rm.hist.UpdateDuration(start)
	c, ok := rm.counts.Load(code)
	if !ok {
		c, _ = rm.counts.LoadOrStore(code, metrics.GetOrCreateCounter(
			`reqgate_core_requests_total{route="`+rm.route+`",code="`+strconv.Itoa(code)+`"}`))
	}
	c.(*metrics.Counter).Inc()
}

// routeClass is the path template of an API request after the key, e.g. /{kind}/{id}/fieldhistory/{field}.
// Segments that name things (kinds, ids, emails) become placeholders.
func routeClass(parts []string) string {
	if len(parts) == 0 {
		return "/"
	}
	switch parts[0] {
	case "user":
		return userRoute(parts)
	case "object", "rate_throttle_status":
		if len(parts) == 1 {
			return "/" + parts[0]
		}
		return "other"
	}
	return kindRoute(parts)
}

// userRoute is the path template of a request under /user.
func userRoute(parts []string) string {
	switch len(parts) {
	case 1:
		return "/user"
	case 2:
		if _, ok := parseID(parts[1]); ok {
			return "/user/{id}"
		}
		return "/user/{email}"
	}
	return "other"
}

// kindRoute is the path template of a request under a kind's segment: the words of the interface stay, the
// segment after fieldhistory is a field id and any other segment a record id. Long paths are "other".
func kindRoute(parts []string) string {
	route := "/{kind}"
	prev := "" // the segment before p, after the kind
	for _, p := range parts[1:] {
		switch p {
		case "field", "view", "search", "related", "fieldhistory":
			route += "/" + p
		default:
			if prev == "fieldhistory" {
				route += "/{field}"
			} else {
				route += "/{id}"
			}
		}
		if len(route) > 64 {
			return "other"
		}
		prev = p
	}
	return route
}

// RequestsServed is the number of requests the cores of the process have answered: the sum of
// reqgate_core_requests_total.
func RequestsServed() uint64 {
	var n uint64
	allRouteMetrics.Range(func(_, v any) bool {
		v.(*routeMetrics).counts.Range(func(_, c any) bool {
			n += c.(*metrics.Counter).Get()
			return true
		})
		return true
	})
	return n
}
