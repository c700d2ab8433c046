package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/VictoriaMetrics/metrics"
)

// Set at link time (the Makefile and the Dockerfile pass -ldflags "-X main.version=..."). The revision comes
// the same way because the go command records none where it finds no .git directory: in a container build
// (.git is not in the context) and in a git worktree (.git is a file there). Left empty, each is read from the
// build information the go command records.
var (
	version     string
	vcsRevision string
	vcsTime     string
	vcsModified string // "true" when built from a work tree with uncommitted changes
)

// buildInfo says which code a binary runs: what `reqgate version` prints and reqgate_build_info exports.
type buildInfo struct {
	Version   string // the release (VERSION), else the module version: a pseudo-version or "(devel)"
	Revision  string // VCS commit, "" when unknown
	Time      string // commit time (RFC 3339), "" when unknown
	Modified  bool   // built from a work tree with uncommitted changes
	GoVersion string
	Platform  string // GOOS/GOARCH
}

// readBuildInfo merges the link-time values with what runtime/debug recorded at build time.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: vcsRevision, Time: vcsTime, Modified: vcsModified == "true",
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if b.Version == "" {
			b.Version = "unknown"
		}
		return b
	}
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Revision == "" {
				b.Revision = s.Value
			}
		case "vcs.time":
			if b.Time == "" {
				b.Time = s.Value
			}
		case "vcs.modified":
			b.Modified = b.Modified || s.Value == "true"
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

// String is the line `reqgate version` prints.
func (b buildInfo) String() string {
	rev := b.Revision
	if rev == "" {
		rev = "unknown"
	}
	if b.Modified {
		rev += " (modified)"
	}
	t := b.Time
	if t == "" {
		t = "unknown"
	}
	return fmt.Sprintf("reqgate %s\n  revision: %s\n  time:     %s\n  go:       %s %s\n", b.Version, rev, t, b.GoVersion, b.Platform)
}

// registerBuildInfo exports reqgate_build_info{version,revision,goversion} 1, so a dashboard can tell which
// release each instance runs.
func registerBuildInfo(b buildInfo) {
	rev := b.Revision
	if rev == "" {
		rev = "unknown"
	}
	name := "reqgate_build_info{version=" + strconv.Quote(b.Version) + ",revision=" + strconv.Quote(rev) +
		",goversion=" + strconv.Quote(b.GoVersion) + "}"
	metrics.GetOrCreateGauge(name, func() float64 { return 1 })
}

func printVersion(w io.Writer) int {
	fmt.Fprint(w, readBuildInfo())
	return 0
}
