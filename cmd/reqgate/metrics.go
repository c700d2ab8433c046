package main

import "github.com/VictoriaMetrics/metrics"

// The metrics the binary counts itself (each package declares its own); writeMetrics serves them with the rest.
var (
	// Configurations read again on SIGHUP and applied or refused (reload.go).
	reloadsApplied = metrics.NewCounter(`reqgate_config_reloads_total{result="applied"}`)
	reloadsRefused = metrics.NewCounter(`reqgate_config_reloads_total{result="refused"}`)

	// Account changes the gateways were not told of: the bus was down (core.go).
	announceErrors = metrics.NewCounter(`reqgate_core_purge_publish_errors_total`)
)
