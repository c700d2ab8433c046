package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/api"
)

// Instrumentation scopes of the process's tracers.
const (
	gatewayScope = "github.com/reqgate/reqgate/gateway"
	coreScope    = "github.com/reqgate/reqgate/core"
)

// tracing is the process's trace pipeline: spans batched and exported over OTLP/HTTP to tracing.endpoint. A
// nil *tracing is tracing off: its tracers are nil and its shutdown does nothing.
type tracing struct {
	tp *sdktrace.TracerProvider
}

// startTracing builds the trace pipeline of cfg, or returns nil when tracing.endpoint is empty. Nothing is
// sent until the first span ends, so an unreachable collector does not stop the start (export failures are
// logged as warnings).
func startTracing(cfg *config.Config, log *slog.Logger) *tracing {
	t := cfg.Tracing
	if t.Endpoint == "" {
		return nil
	}
	// The HTTP exporter connects nothing at creation: it fails only on a cancelled context, which this is not.
	// Were it ever to fail, the process serves untraced rather than not at all.
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(tracesURL(t.Endpoint)))
	if err != nil {
		log.Error("tracing off: cannot create the OTLP exporter", "err", err)
		return nil
	}
	name := t.ServiceName
	if name == "" {
		name = "reqgate-" + cfg.Role
	}
	res := resource.NewSchemaless(
		attribute.String("service.name", name),
		attribute.String("service.version", readBuildInfo().Version),
	)
	// The batcher's queue is bounded (2048 spans; more are dropped), so callers that ask for sampling
	// cannot make the process hold more than that.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(t.SampleRatio))),
	)
	tlog := log.With("part", "tracing")
	// The SDK reports export failures to a handler of the process; without this one they would be plain
	// lines on stderr, outside log.format.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { tlog.Warn("tracing: export failed", "err", err) }))
	tlog.Info("tracing on", "endpoint", t.Endpoint, "sample_ratio", t.SampleRatio, "service_name", name)
	return &tracing{tp: tp}
}

// tracesURL is the OTLP/HTTP traces URL of an endpoint: a base URL (no path) gets the standard /v1/traces,
// a URL with a path is used as it is.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Path != "" && u.Path != "/" {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// tracer returns the tracer of an instrumentation scope, nil when tracing is off.
func (t *tracing) tracer(scope string) trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tp.Tracer(scope)
}

// shutdown exports the spans still queued, within ctx (the shutdown timeout), and stops the exporter.
func (t *tracing) shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: flush spans: %w", err)
	}
	return nil
}

// traceHandler gives every request of the core a server span, the child of the traceparent the gateway (or
// another caller) sent; the store calls of the request become its children (core/storetracing). The probes
// /healthz and /readyz are not traced: their spans would bury the requests' ones. With tracer nil it returns
// next itself.
func traceHandler(tracer trace.Tracer, next http.Handler) http.Handler {
	if tracer == nil {
		return next
	}
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, "core "+r.Method, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		sw := &api.StatusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		if span.IsRecording() {
			status := sw.Status()
			span.SetAttributes(
				attribute.String("http.request.method", r.Method),
				attribute.String("url.path", r.URL.Path),
				attribute.Int("http.response.status_code", status),
				attribute.String("reqgate.request_id", clipID(r.Header.Get("X-Request-Id"))),
			)
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		}
	})
}

// traceID is the id of the trace of ctx's span, "" when there is none.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
