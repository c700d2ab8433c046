// Command reqgate runs the requirements service of docs/api.md (the core), the gateway in front of it, or
// both in one process:
//
//	reqgate serve     core and gateway in one process (the default for one machine)
//	reqgate core      the XML REST service alone, with its store
//	reqgate gateway   the gateway alone, in front of --upstream
//	reqgate config    check a config file, or print the effective configuration
//	reqgate accounts  check account files without a store
//	reqgate store     migrate a store, or copy accounts between stores
//	reqgate version   the release, VCS revision and Go version of the binary
//	reqgate openapi   print the OpenAPI document of the interface (what the gateway serves at /openapi.json)
//
// Flags, REQGATE_* variables and the --config file are read by package config; this package only wires the
// parts together and runs them until SIGINT or SIGTERM, then shuts them down gracefully. SIGHUP reads the
// configuration and the account files again and applies what can change without a restart (reload.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway/openapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: reqgate <command> [flags]

Commands:
  serve     run the core and the gateway in one process
  core      run the core service alone
  gateway   run the gateway alone, in front of --upstream
  config    check a config file or print the effective configuration (reqgate config --help)
  accounts  check account files without a store (reqgate accounts --help)
  store     migrate a store, or copy accounts between stores (reqgate store --help)
  version   print the release, VCS revision and time, and Go version (also --version)
  openapi   print the OpenAPI 3.1 document of the interface (also served by the gateway at /openapi.json)

Run 'reqgate <command> --help' for the flags of a command.
`

// run is main without the process: it returns the exit code, so tests can drive it.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	role, rest := args[0], args[1:]
	switch role {
	case "config":
		return config.RunCommand(rest, environ, stdout, stderr)
	case "store":
		return runStoreCommand(ctx, rest, stdout, stderr)
	case "accounts":
		return runAccountsCommand(rest, stdout, stderr)
	case "version", "--version", "-version":
		return printVersion(stdout)
	case "openapi":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "reqgate openapi: takes no arguments\n")
			return 2
		}
		if _, err := stdout.Write(openapi.JSON()); err != nil {
			return 1
		}
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case config.RoleServe, config.RoleCore, config.RoleGateway:
	default:
		fmt.Fprintf(stderr, "reqgate: unknown command %q\n\n%s", role, usage)
		return 2
	}
	// SIGHUP reloads the configuration (reload.go) instead of ending the process, from before the
	// configuration is read: a signal sent during the start waits until the parts run.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg, err := config.Load(role, rest, environ)
	if errors.Is(err, config.ErrHelp) {
		fmt.Fprint(stdout, config.Usage(role))
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reqgate %s: %v\n", role, err)
		return 2
	}
	log, logw, access, level := newLogger(cfg.Log, stderr)
	defer logw.Close()
	defer access.Close() // first: its gathered lines go to logw
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	bi := readBuildInfo()
	registerBuildInfo(bi)
	log.Info("reqgate starting", "role", role, "version", bi.Version, "revision", bi.Revision, "go", bi.GoVersion)
	started := time.Now()
	rl := newReloader(cfg, rest, environ, log, level)
	if err := runRole(ctx, cfg, rl, hup, access, stdout); err != nil {
		log.Error("reqgate stopped", "role", role, "err", err)
		return 1
	}
	logStopped(log, role, time.Since(started))
	return 0
}
