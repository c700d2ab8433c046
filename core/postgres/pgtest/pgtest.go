// Package pgtest starts a private PostgreSQL server for tests: initdb into a temporary directory, the
// postgres server on a free loopback port with its socket in that directory, and a fresh database per test.
//
// Tests run as root under CI, and initdb refuses root, so the server then runs as the unprivileged
// "postgres" system user (created by Debian's postgresql package). A server that cannot start is a test
// failure, never a skip.
//
// One server per test binary keeps suites fast: call Shared from tests and Stop from TestMain:
//
//	func TestMain(m *testing.M) { code := m.Run(); pgtest.Stop(); os.Exit(code) }
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one running PostgreSQL server.
type Server struct {
	Dir  string // temporary directory holding the data directory and the socket
	Port int    // on 127.0.0.1
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
	seq  atomic.Int64
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Shared returns the server of this test binary, starting it on first use; it fails tb when the server
// cannot start. Stop it from TestMain.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a PostgreSQL server; make test runs it, make check (-short) does not")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start()
	}
	if sharedErr != nil {
		tb.Fatalf("pgtest: %v", sharedErr)
	}
	return shared
}

// Stop stops the shared server, if one was started, and removes its directory.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}

// binDir finds the PostgreSQL server programs: $REQGATE_PG_BIN, the newest /usr/lib/postgresql/*/bin, or PATH.
func binDir() (string, error) {
	if d := os.Getenv("REQGATE_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) < version(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server programs (initdb): install Debian's postgresql package or set REQGATE_PG_BIN")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// credential returns the identity to run initdb and postgres as: nil when not root, else the postgres user.
func credential() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, os.Getuid(), os.Getgid(), nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("running as root needs the unprivileged postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

// Start initialises and starts a new server; Stop it when done.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, uid, gid, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fail(fmt.Errorf("chown %s: %w", dir, err))
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	// A free port may be taken by someone else before the server binds it: then try another.
	var lastErr error
	for range 3 {
		s, err := launch(bin, dir, data, cred)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "already in use") {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// launch starts postgres on a free port of 127.0.0.1 and waits until it accepts connections.
func launch(bin, dir, data string, cred *syscall.Credential) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Port: port, done: make(chan struct{}), log: logf}
	cmd := s.command(bin, data, port, cred, logf)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s.cmd = cmd
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(s.done)
	if err := s.waitReady(30 * time.Second); err != nil {
		s.halt()
		return nil, err
	}
	return s, nil
}

// command is the postgres server of data on port, logging to logf.
func (s *Server) command(bin, data string, port int, cred *syscall.Credential, logf *os.File) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.Dir,
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB", "-c", "log_min_messages=warning")
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: a test binary that dies (timeout, kill) takes its server with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited during start-up:\n%s", s.Log())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			err = c.Ping(ctx)
			c.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready within %v: %v\n%s", limit, err, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Log returns the server log so far (for failure messages).
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
	return string(b)
}

// DSN returns the URL of database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// NewDatabase creates a fresh, empty database and returns its URL. It is dropped when tb ends.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.seq.Add(1))
	if err := s.exec("CREATE DATABASE " + name + " STRATEGY FILE_COPY"); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.DSN(name)
}

func (s *Server) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// Stop stops the server at once (SIGQUIT: immediate shutdown; the data is thrown away) and removes its
// directory.
func (s *Server) Stop() {
	s.halt()
	os.RemoveAll(s.Dir)
}

// Restart stops the server as an operator's restart does (SIGINT: a fast shutdown, which ends every session
// with admin_shutdown and refuses new ones with cannot_connect_now), then starts it again on the same port and
// data directory, and waits until it accepts connections. What was committed survives.
func (s *Server) Restart() error {
	bin, err := binDir()
	if err != nil {
		return err
	}
	cred, _, _, err := credential()
	if err != nil {
		return err
	}
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			return fmt.Errorf("postgres did not stop within 30s:\n%s", s.Log())
		}
	}
	s.log.Close()
	logf, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	data := filepath.Join(s.Dir, "data")
	// The port may be held a moment by the old server's sockets: try again a few times.
	for i := 0; ; i++ {
		cmd := s.command(bin, data, s.Port, cred, logf)
		if err := cmd.Start(); err != nil {
			logf.Close()
			return fmt.Errorf("start postgres: %w", err)
		}
		s.cmd, s.done = cmd, make(chan struct{})
		go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(s.done)
		err := s.waitReady(30 * time.Second)
		if err == nil {
			s.log = logf
			return nil
		}
		if i == 20 || !strings.Contains(err.Error(), "already in use") {
			s.log = logf
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// halt stops the server process and closes its log.
func (s *Server) halt() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	s.log.Close()
}

// String names the server for logs.
func (s *Server) String() string {
	return "postgres on 127.0.0.1:" + strconv.Itoa(s.Port) + " in " + strings.TrimSuffix(s.Dir, "/")
}
