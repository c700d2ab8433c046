package api

import (
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Metrics of the core's HTTP interface, labelled by route class (the class of the route table, the gateway's
// label of the same request; never a raw path, so the number of series stays small), method and status code:
//
//	reqgate_core_requests_total{route="record",method="GET",code="200"}
//	reqgate_core_request_seconds{route="record",method="GET"}   (Prometheus histogram)
type routeMetrics struct {
	hist   *metrics.PrometheusHistogram
	counts sync.Map // status code -> *metrics.Counter
	labels string   // route="...",method="..."
}

var allRouteMetrics sync.Map // routeKey -> *routeMetrics

type routeKey struct{ method, route string }

// knownMethods keeps arbitrary method names out of metric labels.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true}

// observe counts one request and its duration.
func observe(method, route string, code int, start time.Time) {
	if !knownMethods[method] {
		method = "OTHER"
	}
	key := routeKey{method, route}
	v, ok := allRouteMetrics.Load(key)
	if !ok {
		labels := `route="` + route + `",method="` + method + `"`
		rm := &routeMetrics{
			labels: labels,
			hist:   metrics.GetOrCreatePrometheusHistogram(`reqgate_core_request_seconds{` + labels + `}`),
		}
		v, _ = allRouteMetrics.LoadOrStore(key, rm)
	}
	rm := v.(*routeMetrics)
	rm.hist.UpdateDuration(start)
	c, ok := rm.counts.Load(code)
	if !ok {
		c, _ = rm.counts.LoadOrStore(code, metrics.GetOrCreateCounter(
			`reqgate_core_requests_total{`+rm.labels+`,code="`+strconv.Itoa(code)+`"}`))
	}
	c.(*metrics.Counter).Inc()
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
