package testbin

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
)

// readyWithin bounds how long a started binary may take to answer ready: a bound on correctness (a binary
// that never gets ready fails the test), far above what a loaded test machine needs.
const readyWithin = time.Minute

// Proc is one running reqgate process.
type Proc struct {
	Cmd *exec.Cmd
	// Output is what the process wrote, stdout and stderr together; the test logs it when it fails.
	Output *testsupport.LockedBuffer
	// Done receives the process's exit (cmd.Wait's error) once. A test that takes it from Done puts it back,
	// for the cleanup that waits for it.
	Done chan error
}

// Start runs the binary with args, the environment of the test and env ("KEY=value") added, until the test
// ends, when the process is killed (and its output logged if the test failed).
func Start(tb testing.TB, env []string, args ...string) *Proc {
	tb.Helper()
	cmd := exec.Command(Binary(tb), args...)
	cmd.Env = append(os.Environ(), env...)
	return Run(tb, cmd)
}

// Run starts cmd (a reqgate binary, perhaps one built otherwise than Binary), its output collected, until the
// test ends, when the process is killed (and its output logged if the test failed).
func Run(tb testing.TB, cmd *exec.Cmd) *Proc {
	tb.Helper()
	out := &testsupport.LockedBuffer{}
	if cmd.Stdout == nil {
		cmd.Stdout = out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = out
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &Proc{Cmd: cmd, Output: out, Done: make(chan error, 1)}
	go func() { p.Done <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.Done
		if tb.Failed() {
			tb.Logf("%s output:\n%s", cmd.Args, out.String())
		}
	})
	return p
}

// WaitReady polls url (a /readyz or /healthz) until it answers 200. It ends the test if the process exits
// first, or if it is not ready within a minute.
func (p *Proc) WaitReady(tb testing.TB, url string) {
	tb.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(readyWithin)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.Done:
			p.Done <- err // for the cleanup, which waits for it
			tb.Fatalf("reqgate exited before ready: %v\n%s", err, p.Output.String())
		default:
		}
		res, err := client.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("%s not ready within %s", url, readyWithin)
}

// stopWithin bounds how long a process may take to exit after SIGTERM: far above a graceful shutdown's own
// bounds, so that only a process that never exits fails on it.
const stopWithin = 30 * time.Second

// Stop sends SIGTERM and waits for the process to exit, returning its exit (cmd.Wait's error: nil for status
// 0), which it also leaves in Done for the cleanup. It ends the test if the signal cannot be sent or the
// process has not exited within stopWithin.
func (p *Proc) Stop(tb testing.TB) error {
	tb.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		tb.Fatal(err)
	}
	select {
	case err := <-p.Done:
		p.Done <- err // for the cleanup, which waits for it
		return err
	case <-time.After(stopWithin):
		tb.Fatalf("%s did not exit within %s of SIGTERM", p.Cmd.Args, stopWithin)
		return nil
	}
}

// Serve runs `reqgate serve` (the embedded demo account, a fresh SQLite file, no admin listener) on a free
// loopback address, with env added to the test's environment, until the test ends, and returns the process and
// its address once it is ready.
func Serve(tb testing.TB, env ...string) (*Proc, string) {
	tb.Helper()
	addr := FreeAddr(tb)
	p := Start(tb, env, "serve", "--listen", addr, "--admin-listen", "off", "--db", filepath.Join(tb.TempDir(), "reqgate.db"))
	p.WaitReady(tb, "http://"+addr+"/readyz")
	return p, addr
}
