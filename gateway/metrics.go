package gateway

import (
	"strconv"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/gateway/route"
)

// Process-wide metrics (several gateways in one process, as in tests, add up).
var (
	authVerifications = metrics.GetOrCreateCounter(`reqgate_auth_verifications_total`)
	authFailures      = metrics.GetOrCreateCounter(`reqgate_auth_failures_total`)
	authBlocked       = metrics.GetOrCreateCounter(`reqgate_auth_blocked_total`)
	flightShared      = metrics.GetOrCreateCounter(`reqgate_gateway_singleflight_shared_total`)
	panicsTotal       = metrics.GetOrCreateCounter(`reqgate_gateway_panics_total`)
	upstreamRequests  = metrics.GetOrCreateCounter(`reqgate_gateway_upstream_requests_total`)
)

type requestLabels struct {
	route route.Class
	code  int
	cache string
}

var (
	requestCounters sync.Map // requestLabels -> *metrics.Counter
	histograms      sync.Map // histogramKey -> *metrics.PrometheusHistogram
)

// countRequest increments reqgate_gateway_requests_total{route,code,cache}; the counters are looked up by a
// small struct so the hot path builds no strings.
func countRequest(r route.Class, code int, cache string) {
	l := requestLabels{r, code, cache}
	if c, ok := requestCounters.Load(l); ok {
		c.(*metrics.Counter).Inc()
		return
	}
	if cache == "" {
		cache = "none"
	}
	name := `reqgate_gateway_requests_total{route="` + string(r) + `",code="` + strconv.Itoa(code) + `",cache="` + cache + `"}`
	c, _ := requestCounters.LoadOrStore(l, metrics.GetOrCreateCounter(name))
	c.(*metrics.Counter).Inc()
}

type histogramKey struct {
	what string
	r    route.Class
}

// histogram returns reqgate_gateway_<what>_seconds{route} (Prometheus buckets, for histogram_quantile).
func histogram(what string, r route.Class) *metrics.PrometheusHistogram {
	key := histogramKey{what, r}
	if h, ok := histograms.Load(key); ok {
		return h.(*metrics.PrometheusHistogram)
	}
	h, _ := histograms.LoadOrStore(key,
		metrics.GetOrCreatePrometheusHistogram(`reqgate_gateway_`+what+`_seconds{route="`+string(r)+`"}`))
	return h.(*metrics.PrometheusHistogram)
}
