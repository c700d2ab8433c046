// Package redistest runs a private redis-server on a free loopback port for tests: real Redis, never a fake;
// also a Sentinel group (StartSentinel) and a Redis Cluster (StartCluster) of such servers. It fails the test
// (never skips) when redis-server, redis-sentinel or redis-cli cannot start; make deps installs them.
package redistest

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Server is one private redis-server process.
type Server struct {
	Addr string // 127.0.0.1:port
	dir  string
	cmd  *exec.Cmd
	args []string // redis-server arguments beside the address and persistence (a replica's, a cluster node's)
}

// Start starts a redis-server for the test and stops it when the test ends.
func Start(tb testing.TB) *Server { return startServer(tb) }

func startServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a Redis server; make test runs it, make check (-short) does not")
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(freePort(tb)), dir: tb.TempDir(), args: args}
	s.start(tb)
	tb.Cleanup(s.Stop)
	return s
}

// URL is the redis:// URL of the server (database 0).
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Stop kills the server (as an outage would); Restart brings it back on the same address.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same address after Stop.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Stop()
	s.start(tb)
}

func (s *Server) start(tb testing.TB) {
	tb.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	path, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server not installed (apt-get install -y redis-server): %v", err)
	}
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "yes", "--loglevel", "warning")
	cmd.Args = append(cmd.Args, s.args...)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	tb.Fatalf("redis-server on %s did not answer PING within 10s", s.Addr)
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if string(buf[:n]) != "+PONG\r\n" {
		return fmt.Errorf("unexpected reply %q", buf[:n])
	}
	return nil
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Pause freezes the server (SIGSTOP) so that it accepts connections but answers nothing, as a stalled Redis
// would; Resume (SIGCONT) lets it answer again.
func (s *Server) Pause(tb testing.TB) {
	tb.Helper()
	if s.cmd == nil {
		tb.Fatalf("redistest: Pause on a stopped server")
	}
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatalf("redistest: pause: %v", err)
	}
}

// Resume undoes Pause.
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	if s.cmd == nil {
		tb.Fatalf("redistest: Resume on a stopped server")
	}
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatalf("redistest: resume: %v", err)
	}
}

// PID is the process id of the running server (0 when stopped), for benchmarks that read its CPU time.
func (s *Server) PID() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
