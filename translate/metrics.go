package translate

import (
	"errors"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Metrics of the translation, in the process's default metrics set (the gateway's /metrics): how long each
// direction takes (translation is on the cache-miss path), how many bytes it reads, and why it fails.
var (
	xmlToJSONSeconds = metrics.GetOrCreatePrometheusHistogram(`reqgate_translate_duration_seconds{direction="xml_to_json"}`)
	jsonToXMLSeconds = metrics.GetOrCreatePrometheusHistogram(`reqgate_translate_duration_seconds{direction="json_to_xml"}`)
	xmlToJSONBytes   = metrics.GetOrCreateCounter(`reqgate_translate_input_bytes_total{direction="xml_to_json"}`)
	jsonToXMLBytes   = metrics.GetOrCreateCounter(`reqgate_translate_input_bytes_total{direction="json_to_xml"}`)
	xmlErrors        = metrics.GetOrCreateCounter(`reqgate_translate_errors_total{direction="xml_to_json",kind="xml"}`)
	syntaxErrors     = metrics.GetOrCreateCounter(`reqgate_translate_errors_total{direction="json_to_xml",kind="syntax"}`)
	structureErrors  = metrics.GetOrCreateCounter(`reqgate_translate_errors_total{direction="json_to_xml",kind="structure"}`)
)

// observe records one translation.
func observe(seconds *metrics.PrometheusHistogram, bytes *metrics.Counter, start time.Time, n int, err error) {
	seconds.UpdateDuration(start)
	bytes.Add(n)
	if err == nil {
		return
	}
	var se *SyntaxError
	switch {
	case errors.As(err, &se):
		syntaxErrors.Inc()
	case seconds == xmlToJSONSeconds:
		xmlErrors.Inc()
	default:
		structureErrors.Inc()
	}
}
