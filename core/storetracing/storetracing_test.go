package storetracing_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/core/storetest"
	"github.com/reqgate/reqgate/core/storetracing"
)

// TestConformance runs the store conformance suite through the wrapper: it passes every call, result and
// error through unchanged.
func TestConformance(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	storetest.Run(t, func(t *testing.T) core.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "core.db"))
		if err != nil {
			t.Fatal(err)
		}
		return storetracing.Wrap(st, tp.Tracer("test"))
	})
}

// TestSpans checks which calls make spans: those within a traced request, as children of its span, named by
// the operation; a failure of the store is marked, a not-found answer is not; a call outside a trace makes none.
func TestSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "core.db"))
	if err != nil {
		t.Fatal(err)
	}
	s := storetracing.Wrap(st, tp.Tracer("test"))
	if err := s.Apply(context.Background(), storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("a call outside a trace made %d spans", n)
	}
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	for _, tc := range []struct {
		name    string
		call    func() error
		span    string
		failure bool
	}{
		{"found", func() error { _, err := s.Account(ctx, "acme"); return err }, "store.account", false},
		{"not found", func() error {
			if _, err := s.Account(ctx, "nobody"); !errors.Is(err, core.ErrNotFound) {
				return errors.New("want ErrNotFound")
			}
			return nil
		}, "store.account", false},
		{"ping", func() error { return s.Ping(ctx) }, "store.ping", false},
		{"canceled", func() error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.Users(cctx, 1); err == nil {
				return errors.New("Users on a canceled context: no error")
			}
			return nil
		}, "store.users", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp.Reset()
			if err := tc.call(); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			sp := spans[0]
			if sp.Name != tc.span || sp.Parent.SpanID() != parent.SpanContext().SpanID() ||
				sp.SpanContext.TraceID() != parent.SpanContext().TraceID() {
				t.Errorf("span %q under %s in %s; want %q under the request's span %s", sp.Name,
					sp.Parent.SpanID(), sp.SpanContext.TraceID(), tc.span, parent.SpanContext().SpanID())
			}
			if failed := sp.Status.Code.String() == "Error"; failed != tc.failure {
				t.Errorf("span status %v, want failure %v", sp.Status, tc.failure)
			}
		})
	}
	parent.End()
	_ = s.Close()
}
