// Package testbin gives the tests that run the real reqgate binary, as an operator would, what they all need:
// the binary, built once per test run, free loopback addresses for its listeners, and the process started,
// waited for until ready and killed when the test ends.
package testbin

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Remove deletes the binary Binary built, if any. A package whose tests use Binary calls it from TestMain after
// m.Run: each test process builds its own copy (some 50 MB), which would otherwise stay in the temporary
// directory after every run.
func Remove() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}

// Binary builds cmd/reqgate once per test run and returns its path. It is built without the race detector,
// whatever the test binary is: what runs is the binary an operator runs.
func Binary(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the reqgate binary built and run; make test runs it, make check (-short) does not")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reqgate-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "reqgate")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/reqgate/reqgate/cmd/reqgate").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// FreeAddr is a loopback address that was free when it returned: a listener opened on port 0 and closed.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
