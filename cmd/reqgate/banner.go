package main

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/gateway"
)

// demoBanner tells how to reach the demo account `serve` provisioned: as text on stdout when stdout is a
// terminal (a person started it), else as a log line on stderr like every other line of the process, so that a
// log pipeline reading the output of a container gets nothing that is not a record of log.format.
func demoBanner(stdout io.Writer, log *slog.Logger, base string) {
	if isTerminal(stdout) {
		fmt.Fprintf(stdout, "\nDemo account ready:\n  base URL (v2): %s/api2/demo\n  base URL (v1): %s/api/demo\n"+
			"  users: demo / demo, viewer / viewer\n  try:   curl -u demo:demo %s/api2/demo/re/1\n\n", base, base, base)
		return
	}
	log.Info("demo account ready", "base_url_v2", base+"/api2/demo", "base_url_v1", base+"/api/demo",
		"users", "demo / demo, viewer / viewer", "try", "curl -u demo:demo "+base+"/api2/demo/re/1")
}

// logStopped is the last line of a clean stop: the role, how long it ran, and the requests it answered on its
// public listener (the gateway's in serve and gateway, the core's in core).
func logStopped(log *slog.Logger, role string, uptime time.Duration) {
	served := gateway.RequestsServed()
	if role == config.RoleCore {
		served = api.RequestsServed()
	}
	log.Info("stopped", "role", role, "uptime", uptime.Round(time.Millisecond).String(),
		"uptime_seconds", uptime.Seconds(), "requests", served)
}
