package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway/accesslog"
)

// TestAccessLogFollowsLogConfig checks that the gateway's access log takes log.format and is off above
// log.level info, like the slog lines it sits among.
func TestAccessLogFollowsLogConfig(t *testing.T) {
	tests := []struct {
		level, format string
		prefix        string // "" when there is no access log
	}{
		{"info", "json", `{"time":"`},
		{"info", "text", "time="},
		{"debug", "JSON", `{"time":"`},
		{"warn", "json", ""},
		{"error", "text", ""},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			var out bytes.Buffer
			_, lw, access := newLogger(config.Log{Level: tt.level, Format: tt.format}, &out)
			defer lw.Close()
			if tt.prefix == "" {
				if access != nil {
					t.Fatal("an access logger above level info")
				}
				return
			}
			if access == nil {
				t.Fatal("no access logger at level " + tt.level)
			}
			if err := access.Log(time.Now(), &accesslog.Entry{Path: "/api2/demo/re/1", Status: 200}); err != nil {
				t.Fatal(err)
			}
			lw.Flush()
			got := out.String()
			if !strings.HasPrefix(got, tt.prefix) || !strings.Contains(got, "request") || !strings.Contains(got, "part") {
				t.Errorf("access line %q, want %s... with msg request and part gateway", got, tt.prefix)
			}
		})
	}
}
