package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestHeaderCarrier checks the carrier over fasthttp's request header: lookups ignore case, Set replaces
// every value, Keys lists each header, and a traceparent written through it reads back as the same span.
func TestHeaderCarrier(t *testing.T) {
	var h fasthttp.RequestHeader
	h.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	h.Add("X-Multi", "a")
	h.Add("X-Multi", "b")
	c := headerCarrier{&h}
	for _, tc := range []struct{ key, want string }{
		{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		{"TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		{"tracestate", ""},
		{"x-multi", "a"},
	} {
		if got := c.Get(tc.key); got != tc.want {
			t.Errorf("Get(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
	c.Set("x-multi", "c")
	if got := h.PeekAll("X-Multi"); len(got) != 1 || string(got[0]) != "c" {
		t.Errorf("after Set, X-Multi = %q, want only c", got)
	}
	keys := c.Keys()
	for _, k := range []string{"Traceparent", "X-Multi"} {
		if !slices.Contains(keys, k) {
			t.Errorf("Keys() = %q, lacks %q", keys, k)
		}
	}

	// Extract then Inject into another header gives the same span context.
	sc := trace.SpanContextFromContext(propagator.Extract(context.Background(), c))
	if !sc.IsValid() || !sc.IsSampled() || sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("extracted %v", sc)
	}
	var out fasthttp.RequestHeader
	propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), headerCarrier{&out})
	if got := string(out.Peek("traceparent")); got != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("injected traceparent %q", got)
	}
}

// recordingProxy is a real HTTP hop in front of the core that notes the traceparent of every request it
// passes on.
type recordingProxy struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

func startRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	p := &recordingProxy{}
	p.URL = frontCore(t, target, func(w http.ResponseWriter, r *http.Request) bool {
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Get("Traceparent"))
		p.mu.Unlock()
		return false
	})
	return p
}

// take returns the traceparents seen since the last call.
func (p *recordingProxy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.seen
	p.seen = nil
	return s
}

// TestTracedRequests sends requests through a traced gateway (spans kept in memory) in front of a real core
// and checks the trace each makes: the caller's traceparent is continued, each stage that works has its span
// under the server span, the core gets the traceparent of the gateway.upstream span, and the access log
// names the trace. Without a tracer the caller's traceparent reaches the core untouched (a verification,
// which sends nothing of the caller's request but its credential, sends none) and no trace_id is logged.
func TestTracedRequests(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	proxy := startRecordingProxy(t, c.URL)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var logBuf testsupport.LockedBuffer
	// The access log is written while the gateway's logger is at info or below.
	opt := Options{Upstreams: []string{proxy.URL}, Cache: CacheOptions{Enabled: true},
		AccessLog: accesslog.New(&logBuf, "json"), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	untraced := startGateway(t, opt)
	opt.Tracer = tp.Tracer("test")
	traced := startGateway(t, opt)

	const (
		callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerSpan  = "00f067aa0ba902b7"
		sampled     = "00-" + callerTrace + "-" + callerSpan + "-01"
		unsampled   = "00-" + callerTrace + "-" + callerSpan + "-00"
	)
	// The request id of each server span, checked after every request: a span is exported after its
	// request's exchange has gone back to the pool.
	requestIDs := map[*tracetest.SpanStub]string{}
	for _, tc := range []struct {
		name      string
		gw        *testGateway
		path      string
		headers   []string
		wantSpans []string // names of the spans under the server span, sorted; nil: no spans at all
		wantCache string
		traceID   string // the trace of every span, of the core's traceparent and of the log; "" = a new one
		wantCore  []string
	}{
		{name: "miss with the caller's sampled traceparent", gw: traced, path: "/api2/demo/re/1",
			headers:   []string{"traceparent: " + sampled},
			wantSpans: []string{"gateway.auth", "gateway.cache", "gateway.upstream", "gateway.upstream"},
			wantCache: cacheMiss, traceID: callerTrace},
		{name: "JSON hit with the caller's traceparent", gw: traced, path: "/api2/demo/re/1",
			headers:   []string{"traceparent: " + sampled, "Accept: application/json"},
			wantSpans: []string{"gateway.auth", "gateway.cache", "gateway.translate"},
			wantCache: cacheHit, traceID: callerTrace},
		{name: "miss without a traceparent starts a trace", gw: traced, path: "/api2/demo/re/2",
			wantSpans: []string{"gateway.auth", "gateway.cache", "gateway.upstream"}, wantCache: cacheMiss},
		{name: "malformed traceparent starts a trace", gw: traced, path: "/api2/demo/re/3",
			headers:   []string{"traceparent: 00-zz-yy-01"},
			wantSpans: []string{"gateway.auth", "gateway.cache", "gateway.upstream"}, wantCache: cacheMiss},
		{name: "the caller's unsampled traceparent is followed", gw: traced, path: "/api2/demo/re/4",
			headers: []string{"traceparent: " + unsampled}, wantCache: cacheMiss, traceID: callerTrace},
		{name: "untraced gateway passes the traceparent on", gw: untraced, path: "/api2/demo/re/5",
			headers: []string{"traceparent: " + sampled}, wantCache: cacheMiss, wantCore: []string{"", sampled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp.Reset()
			proxy.take()
			logBuf.Reset()
			res := get(t, tc.gw.URL+tc.path, tc.headers...)
			if res.Status != http.StatusOK || res.Header.Get("X-Cache") != tc.wantCache {
				t.Fatalf("status %d, X-Cache %q; want 200, %s", res.Status, res.Header.Get("X-Cache"), tc.wantCache)
			}
			spans := exp.GetSpans()
			core := proxy.take()
			logLine := logBuf.String()
			if tc.gw == untraced {
				if !slices.Equal(core, tc.wantCore) {
					t.Errorf("the core got traceparents %q, want %q", core, tc.wantCore)
				}
				if len(spans) != 0 || strings.Contains(logLine, "trace_id") {
					t.Errorf("untraced gateway made %d spans; log %s", len(spans), logLine)
				}
				return
			}
			if tc.wantSpans == nil {
				checkUnsampled(t, spans, core, logLine, tc.traceID)
				return
			}
			checkTrace(t, spans, core, logLine, tc.wantSpans, tc.traceID, callerSpan)
			for i := range spans {
				if spans[i].SpanKind == trace.SpanKindServer {
					requestIDs[&spans[i]] = res.Header.Get("X-Request-Id")
				}
			}
		})
	}
	for s, want := range requestIDs {
		for _, a := range s.Attributes {
			if a.Key == "reqgate.request_id" && a.Value.AsString() != want {
				t.Errorf("span %s: request id %q, want %q", s.Name, a.Value.AsString(), want)
			}
		}
	}
	// The probes are not traced.
	exp.Reset()
	for _, path := range []string{"/healthz", "/readyz"} {
		if res := do(t, http.MethodGet, traced.URL+path, "", "", "", "traceparent: "+sampled); res.Status != http.StatusOK {
			t.Fatalf("%s: status %d", path, res.Status)
		}
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("the probes made %d spans", n)
	}
}

// checkUnsampled checks a request whose caller said not to sample: no span, yet the core still gets the
// caller's trace (unsampled) and the log names it.
func checkUnsampled(t *testing.T, spans tracetest.SpanStubs, core []string, logLine, traceID string) {
	t.Helper()
	if len(spans) != 0 || len(core) == 0 {
		t.Errorf("%d spans recorded for an unsampled trace, %d requests reached the core", len(spans), len(core))
	}
	for _, tp := range core {
		if !strings.HasPrefix(tp, "00-"+traceID+"-") || !strings.HasSuffix(tp, "-00") {
			t.Errorf("the core got traceparent %q, want trace %s unsampled", tp, traceID)
		}
	}
	if !strings.Contains(logLine, `"trace_id":"`+traceID+`"`) {
		t.Errorf("access log lacks trace_id %s: %s", traceID, logLine)
	}
}

// checkTrace checks the spans of one sampled request: one server span (the child of the caller's span when
// callerTrace is set) with wantChildren below it in one trace, each gateway.upstream span the parent of one
// traceparent the core got, and the trace id in the access log.
func checkTrace(t *testing.T, spans tracetest.SpanStubs, core []string, logLine string, wantChildren []string, callerTrace, callerSpan string) {
	t.Helper()
	var server *tracetest.SpanStub
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for i, s := range spans {
		byID[s.SpanContext.SpanID()] = s
		if s.SpanKind == trace.SpanKindServer {
			server = &spans[i]
		}
	}
	if server == nil {
		t.Fatalf("no server span among %d", len(spans))
	}
	tid := server.SpanContext.TraceID().String()
	if callerTrace != "" && (tid != callerTrace || server.Parent.SpanID().String() != callerSpan || !server.Parent.IsRemote()) {
		t.Errorf("server span in trace %s under %s, want the caller's %s under %s", tid, server.Parent.SpanID(), callerTrace, callerSpan)
	}
	if callerTrace == "" && server.Parent.IsValid() {
		t.Errorf("server span has parent %v, want a root", server.Parent)
	}
	if server.Name != "GET record" {
		t.Errorf("server span name %q", server.Name)
	}
	var children []string
	upstreamIDs := map[string]bool{}
	for _, s := range spans {
		if s.SpanContext.TraceID().String() != tid {
			t.Errorf("span %s in trace %s, want %s", s.Name, s.SpanContext.TraceID(), tid)
		}
		if s.SpanKind == trace.SpanKindServer {
			continue
		}
		children = append(children, s.Name)
		if _, ok := byID[s.Parent.SpanID()]; !ok {
			t.Errorf("span %s has a parent %s outside the trace", s.Name, s.Parent.SpanID())
		}
		if s.Name == "gateway.upstream" {
			upstreamIDs["00-"+tid+"-"+s.SpanContext.SpanID().String()+"-01"] = true
		}
	}
	slices.Sort(children)
	if !slices.Equal(children, wantChildren) {
		t.Errorf("spans under the server span %q, want %q", children, wantChildren)
	}
	if len(core) != len(upstreamIDs) {
		t.Errorf("the core got %d requests, want one per gateway.upstream span (%d)", len(core), len(upstreamIDs))
	}
	for _, tp := range core {
		if !upstreamIDs[tp] {
			t.Errorf("the core got traceparent %q, not of a gateway.upstream span", tp)
		}
	}
	if !strings.Contains(logLine, `"trace_id":"`+tid+`"`) {
		t.Errorf("access log lacks trace_id %s: %s", tid, logLine)
	}
}
