package gateway

import (
	"context"
	"strconv"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing (Options.Tracer): a request gets a server span, continuing the caller's W3C traceparent when it
// sends one, and child spans for the stages that do work of their own: gateway.auth, gateway.limit,
// gateway.body, gateway.cache (the lookup of a cacheable read), gateway.translate (XML<->JSON) and
// gateway.upstream (each exchange with the core, which gets the traceparent of that span, so the core's spans
// join the trace). With no tracer every hook is one check: no context, span or header is made.

// propagator reads and writes the W3C traceparent and tracestate headers.
var propagator propagation.TextMapPropagator = propagation.TraceContext{}

// headerCarrier is a propagation.TextMapCarrier over a fasthttp request header.
type headerCarrier struct{ h *fasthttp.RequestHeader }

var _ propagation.TextMapCarrier = headerCarrier{}

// Get returns the first value of key ("" when absent); names are matched without regard to case.
func (c headerCarrier) Get(key string) string { return string(c.h.Peek(key)) }

// Set replaces every value of key with value (fasthttp's Set alone would leave a caller's second traceparent
// standing after the one it replaces).
func (c headerCarrier) Set(key, value string) {
	c.h.Del(key)
	c.h.Set(key, value)
}

// Keys lists the header names, in the order the header holds them.
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, c.h.Len())
	for k := range c.h.All() {
		keys = append(keys, string(k))
	}
	return keys
}

// spanScope is a span begun within a request and the context it replaced as the request's current one.
// The zero value (tracing off) ends nothing.
type spanScope struct {
	span   trace.Span
	parent context.Context
}

// startTrace begins the request's server span, the child of the caller's traceparent when it sent a valid
// one. Its name gets the method and route class in endTrace, once the route is known. The probes /healthz and
// /readyz are not traced: their spans would bury the requests' ones.
func (g *Gateway) startTrace(x *exchange) {
	if p := x.ctx.Path(); string(p) == "/healthz" || string(p) == "/readyz" {
		return
	}
	parent := propagator.Extract(context.Background(), headerCarrier{&x.ctx.Request.Header})
	x.tctx, x.span = g.tracer.Start(parent, "gateway", trace.WithSpanKind(trace.SpanKindServer))
	x.recording = x.span.IsRecording()
}

// endTrace ends the server span with what the access log records, and returns its span context (for the trace
// id of the access log).
func (g *Gateway) endTrace(x *exchange, method string, status int) trace.SpanContext {
	sp := x.span
	if x.recording {
		sp.SetName(method + " " + string(x.rt.Class))
		sp.SetAttributes(
			attribute.String("http.request.method", method),
			attribute.String("http.route", string(x.rt.Class)),
			attribute.String("url.path", x.rt.Path),
			attribute.Int("http.response.status_code", status),
			attribute.String("reqgate.request_id", x.logID()), // a copy: the span outlives the exchange's buffer
			attribute.String("reqgate.cache", x.cacheRes),
			attribute.String("reqgate.account", x.rt.APIKey),
		)
		if status >= 500 {
			sp.SetStatus(codes.Error, strconv.Itoa(status))
		}
	}
	sp.End()
	return sp.SpanContext()
}

// startSpan begins a child of the request's current span and makes it the current one. With tracing off, or
// in a trace that is not recorded (whose children would not be either), it does nothing, and is inlined: one
// check on the request path. The core then gets the traceparent of the server span.
func (g *Gateway) startSpan(x *exchange, name string, kind trace.SpanKind) spanScope {
	if !x.recording {
		return spanScope{}
	}
	return g.childSpan(x, name, kind)
}

// childSpan is startSpan with tracing on.
func (g *Gateway) childSpan(x *exchange, name string, kind trace.SpanKind) spanScope {
	s := spanScope{parent: x.tctx}
	x.tctx, s.span = g.tracer.Start(x.tctx, name, trace.WithSpanKind(kind))
	return s
}

// endSpan ends a span of startSpan and makes its parent the current span again.
func (x *exchange) endSpan(s spanScope) {
	if s.span == nil {
		return
	}
	s.span.End()
	x.tctx = s.parent
}

// traceUpstream puts the traceparent of the current span (gateway.upstream) into an upstream request.
func (x *exchange) traceUpstream(req *fasthttp.Request) {
	if x.span != nil {
		propagator.Inject(x.tctx, headerCarrier{&req.Header})
	}
}

// endUpstreamSpan ends a gateway.upstream span with the core's status, or the error of the exchange.
func (x *exchange) endUpstreamSpan(s spanScope, resp *fasthttp.Response, err error) {
	if s.span == nil {
		return
	}
	if err != nil {
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, "upstream exchange failed")
	} else {
		s.span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode()))
	}
	x.endSpan(s)
}
