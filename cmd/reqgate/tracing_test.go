package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// otlpReceiver is a real OTLP/HTTP trace receiver on loopback: it decodes what exporters POST to /v1/traces.
type otlpReceiver struct {
	URL      string
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string // service.name of each resource received
}

func startReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			http.Error(w, "not an OTLP traces request", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(req.Body)
		var msg coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *otlpReceiver) add(msg *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range msg.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				r.services = append(r.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
}

func (r *otlpReceiver) received() ([]*tracepb.Span, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]string(nil), r.services...)
}

// TestTracingThroughServe runs `reqgate serve` with tracing.* pointing at a real OTLP/HTTP receiver, sends one
// authenticated GET, stops the process with SIGTERM (which must flush the spans), and checks what arrived:
// with a caller's sampled traceparent, one trace under the caller's span with the gateway's stages and the
// core's request and store calls, every parent within the trace; the access log names the trace. A caller's
// sampled flag is followed even at ratio 0; without one, ratio 0 exports nothing. With tracing off nothing is
// exported (even with the OTLP environment variables set) and no trace_id is logged.
func TestTracingThroughServe(t *testing.T) {
	const (
		callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerSpan  = "00f067aa0ba902b7"
		sampled     = "00-" + callerTrace + "-" + callerSpan + "-01"
	)
	for _, tc := range []struct {
		name        string
		set         []string // --set values; the endpoint is added when traced
		traced      bool
		traceparent string
		wantSpans   bool
		wantLogID   string // the access log's trace_id: a trace id, "any" for a new one, "" for none
	}{
		{name: "caller's sampled traceparent", traced: true, traceparent: sampled, wantSpans: true, wantLogID: callerTrace},
		{name: "ratio 0 follows the caller's sampled flag", traced: true, set: []string{"tracing.sample_ratio=0"},
			traceparent: sampled, wantSpans: true, wantLogID: callerTrace},
		{name: "ratio 0 without a traceparent exports nothing", traced: true, set: []string{"tracing.sample_ratio=0"},
			wantLogID: "any"},
		{name: "off", traceparent: sampled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recv := startReceiver(t)
			listen := testbin.FreeAddr(t)
			args := []string{"serve", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(t.TempDir(), "r.db")}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			if tc.traced {
				args = append(args, "--set", "tracing.endpoint="+recv.URL)
			}
			// An exporter made while tracing is off would find the receiver through these.
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
			t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
			p := start(t, args...)
			waitReady(t, p, "http://"+listen+"/readyz")

			// An empty Traceparent sends none.
			r := testsupport.Do(t, http.DefaultClient, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", "demo", "",
				"X-Request-Id: traced-1", "Traceparent: "+tc.traceparent)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d", r.Status)
			}
			stop(t, p)

			spans, services := recv.received()
			checkAccessLogTrace(t, p.Output.String(), tc.wantLogID)
			if !tc.wantSpans {
				if len(spans) != 0 {
					t.Errorf("%d spans exported, want none", len(spans))
				}
				return
			}
			for _, s := range services {
				if s != "reqgate-serve" {
					t.Errorf("service.name %q, want reqgate-serve", s)
				}
			}
			checkServeTrace(t, spans, callerTrace, callerSpan)
		})
	}
}

// stop sends SIGTERM and waits for a clean exit: the shutdown flushes the spans.
func stop(t *testing.T, p *proc) {
	t.Helper()
	if err := p.Stop(t); err != nil {
		t.Fatalf("reqgate exited with %v", err)
	}
}

// checkAccessLogTrace finds the access-log line of request traced-1 and checks its trace_id.
func checkAccessLogTrace(t *testing.T, out, want string) {
	t.Helper()
	for l := range strings.SplitSeq(out, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil || rec["msg"] != "request" || rec["request_id"] != "traced-1" {
			continue
		}
		got, _ := rec["trace_id"].(string)
		switch {
		case want == "any" && len(got) != 32:
			t.Errorf("access log trace_id %q, want a new trace id", got)
		case want != "any" && got != want:
			t.Errorf("access log trace_id %q, want %q", got, want)
		}
		return
	}
	t.Errorf("no access-log line for traced-1:\n%s", out)
}

// checkServeTrace checks the spans of one request through serve: all in the caller's trace, the gateway's
// server span the child of the caller's span, every other span the child of a span of the trace, the stages
// present, the core's server span under a gateway.upstream span and a store call under the core's span.
func checkServeTrace(t *testing.T, spans []*tracepb.Span, callerTrace, callerSpan string) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	names := map[string]int{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.GetSpanId())] = s
		names[s.GetName()]++
	}
	for _, s := range spans {
		if tid := hex.EncodeToString(s.GetTraceId()); tid != callerTrace {
			t.Errorf("span %s in trace %s, want the caller's %s", s.GetName(), tid, callerTrace)
		}
		parent := hex.EncodeToString(s.GetParentSpanId())
		if s.GetName() == "GET record" {
			if parent != callerSpan || s.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("gateway server span under %s (kind %v), want under the caller's %s", parent, s.GetKind(), callerSpan)
			}
			continue
		}
		if byID[parent] == nil {
			t.Errorf("span %s has parent %s, not a span of the trace", s.GetName(), parent)
		}
	}
	for _, name := range []string{"GET record", "gateway.auth", "gateway.cache", "gateway.upstream", "core GET", "store.record"} {
		if names[name] == 0 {
			t.Errorf("no %s span among %v", name, names)
		}
	}
	for _, s := range spans {
		parent := byID[hex.EncodeToString(s.GetParentSpanId())]
		switch {
		case s.GetName() == "core GET" && (parent == nil || parent.GetName() != "gateway.upstream"):
			t.Errorf("core span not under a gateway.upstream span")
		case strings.HasPrefix(s.GetName(), "store.") && (parent == nil || parent.GetName() != "core GET"):
			t.Errorf("%s not under the core's span", s.GetName())
		}
	}
}

// TestCoreRequestLogTraceID runs `reqgate core` traced: its request line names the caller's trace and its
// server span is the child of the caller's span, with the store calls below it. Without a traceparent of its
// caller's, the line names the core's own new trace.
func TestCoreRequestLogTraceID(t *testing.T) {
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(crashAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	recv := startReceiver(t)
	listen := testbin.FreeAddr(t)
	p := start(t, "core", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(t.TempDir(), "c.db"),
		"--accounts", accounts, "--set", "tracing.endpoint="+recv.URL)
	waitReady(t, p, "http://"+listen+"/readyz")
	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for i, tp := range []string{caller, ""} {
		// An empty Traceparent sends none.
		r := testsupport.Do(t, http.DefaultClient, http.MethodGet, "http://"+listen+"/api2/crash/user", "writer", "writer", "",
			fmt.Sprintf("X-Request-Id: core-%d", i), "Traceparent: "+tp)
		if r.Status != http.StatusOK {
			t.Fatalf("status %d", r.Status)
		}
	}
	stop(t, p)
	ids := map[string]string{}
	for l := range strings.SplitSeq(p.Output.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "request" && rec["part"] == "core" {
			id, _ := rec["request_id"].(string)
			ids[id], _ = rec["trace_id"].(string)
		}
	}
	if ids["core-0"] != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("request line of the traced call has trace_id %q, want the caller's", ids["core-0"])
	}
	if len(ids["core-1"]) != 32 || ids["core-1"] == ids["core-0"] {
		t.Errorf("request line of the untraced call has trace_id %q, want a new trace", ids["core-1"])
	}
	spans, services := recv.received()
	var server *tracepb.Span
	stores := 0
	for _, s := range spans {
		if s.GetName() == "core GET" && hex.EncodeToString(s.GetTraceId()) == ids["core-0"] {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no core server span in the caller's trace among %d spans", len(spans))
	}
	if got := hex.EncodeToString(server.GetParentSpanId()); got != "00f067aa0ba902b7" {
		t.Errorf("core span under %s, want the caller's span", got)
	}
	for _, s := range spans {
		if strings.HasPrefix(s.GetName(), "store.") && string(s.GetParentSpanId()) == string(server.GetSpanId()) {
			stores++
		}
	}
	if stores == 0 {
		t.Error("no store span under the core's span")
	}
	if len(services) == 0 || services[0] != "reqgate-core" {
		t.Errorf("service.name %q, want reqgate-core", services)
	}
}
