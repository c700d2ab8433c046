package gateway

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// tcpPair is a loopback TCP connection: the server's end wrapped in a deadlineConn, and the client's end.
func tcpPair(t testing.TB) (*deadlineConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := deadlineListener{ln}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return server.(*deadlineConn), client
}

// The deadlines a caller sets behave as on a plain connection, however lazily the socket is armed: a deadline
// moved later does not fire at the earlier one, a deadline moved earlier does, a passed one times out with
// os.ErrDeadlineExceeded, none waits, and a deadline set from another goroutine interrupts a blocked read.
func TestDeadlineConnRead(t *testing.T) {
	const short, long = 50 * time.Millisecond, 5 * time.Second
	for _, tc := range []struct {
		name      string
		deadlines func(c *deadlineConn) // set before the read
		sendAfter time.Duration         // the client writes a byte after this; 0: never
		interrupt bool                  // another goroutine sets a deadline in the past after 100 ms
		wantErr   bool
	}{
		{name: "moved later", deadlines: func(c *deadlineConn) {
			_ = c.SetReadDeadline(time.Now().Add(short))
			_ = c.SetReadDeadline(time.Now().Add(long))
		}, sendAfter: 300 * time.Millisecond},
		{name: "moved earlier", deadlines: func(c *deadlineConn) {
			_ = c.SetReadDeadline(time.Now().Add(long))
			_ = c.SetReadDeadline(time.Now().Add(short))
		}, wantErr: true},
		{name: "passes", deadlines: func(c *deadlineConn) { _ = c.SetReadDeadline(time.Now().Add(short)) }, wantErr: true},
		{name: "removed", deadlines: func(c *deadlineConn) {
			_ = c.SetReadDeadline(time.Now().Add(short))
			_ = c.SetReadDeadline(time.Time{})
		}, sendAfter: 300 * time.Millisecond},
		{name: "both moved later", deadlines: func(c *deadlineConn) {
			_ = c.SetDeadline(time.Now().Add(short))
			_ = c.SetDeadline(time.Now().Add(long))
		}, sendAfter: 300 * time.Millisecond},
		{name: "interrupted", deadlines: func(c *deadlineConn) { _ = c.SetReadDeadline(time.Now().Add(long)) },
			interrupt: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, client := tcpPair(t)
			tc.deadlines(server)
			if tc.sendAfter > 0 {
				time.AfterFunc(tc.sendAfter, func() { _, _ = client.Write([]byte("x")) })
			}
			if tc.interrupt {
				time.AfterFunc(100*time.Millisecond, func() { _ = server.SetReadDeadline(time.Now().Add(-time.Second)) })
			}
			start := time.Now()
			n, err := server.Read(make([]byte, 1))
			if tc.wantErr {
				var ne net.Error
				if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
					t.Fatalf("read = %d, %v; want a timeout", n, err)
				}
				if time.Since(start) >= long {
					t.Fatalf("the read timed out after %v, not at the earlier deadline", time.Since(start))
				}
				return
			}
			if err != nil || n != 1 {
				t.Fatalf("read = %d, %v after %v; want the byte the client sent", n, err, time.Since(start))
			}
		})
	}
}

// A write that outlasts the armed deadline but not the one asked for completes, whole.
func TestDeadlineConnWrite(t *testing.T) {
	server, client := tcpPair(t)
	_ = server.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	_ = server.SetWriteDeadline(time.Now().Add(10 * time.Second))
	data := make([]byte, 64<<20) // far more than loopback's socket buffers: the write blocks until the client reads
	got := make(chan int64, 1)
	time.AfterFunc(300*time.Millisecond, func() {
		n, _ := io.CopyN(io.Discard, client, int64(len(data)))
		got <- n
	})
	n, err := server.Write(data)
	if err != nil || n != len(data) {
		t.Fatalf("write = %d, %v; want all %d bytes", n, err, len(data))
	}
	if r := <-got; r != int64(len(data)) {
		t.Fatalf("client read %d bytes, want %d", r, len(data))
	}

	// A write deadline that passes still fails the write, with the bytes written so far.
	_ = server.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err = server.Write(data)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(data) {
		t.Fatalf("write = %d, %v; want a timeout before all %d bytes", n, err, len(data))
	}
}

// The server's timeouts still hold slow clients with the deadlines moved lazily: a request head left unfinished
// is answered 408 and closed after the read timeout, and a keep-alive connection whose requests moved its
// deadlines many times is closed after the idle timeout once it falls silent.
func TestServerTimeoutsHoldSlowClients(t *testing.T) {
	const readTimeout, idleTimeout = 300 * time.Millisecond, 600 * time.Millisecond
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.ReadTimeout, opt.IdleTimeout = readTimeout, idleTimeout
	gw := startGateway(t, opt)
	request := "GET /healthz HTTP/1.1\r\nHost: gw.test\r\n\r\n"
	for _, tc := range []struct {
		name    string
		send    func(t *testing.T, nc net.Conn) // then the client falls silent
		timeout time.Duration
		want    string // in what the server wrote before closing
	}{
		{"unfinished head", func(t *testing.T, nc net.Conn) {
			if _, err := io.WriteString(nc, "GET /healthz HTTP/1.1\r\nHost: gw.test\r\n"); err != nil {
				t.Fatal(err)
			}
		}, readTimeout, "408 Request Timeout"},
		{"idle after requests", func(t *testing.T, nc net.Conn) {
			br := bufio.NewReader(nc)
			for i := range 50 {
				if _, err := io.WriteString(nc, request); err != nil {
					t.Fatal(err)
				}
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}, idleTimeout, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			tc.send(t, nc)
			start := time.Now()
			_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			rest, err := io.ReadAll(nc) // until the server closes
			waited := time.Since(start)
			if err != nil {
				t.Fatalf("the server did not close the connection (%v after %v)", err, waited)
			}
			if waited < tc.timeout*2/3 {
				t.Errorf("closed after %v, before the %v timeout", waited, tc.timeout)
			}
			if !strings.Contains(string(rest), tc.want) {
				t.Errorf("the server wrote %q before closing, want %q in it", rest, tc.want)
			}
		})
	}
}

// BenchmarkDeadlines is the deadline moves of one request (idle, read, write timeouts) on a TCP connection,
// directly and through a deadlineConn.
func BenchmarkDeadlines(b *testing.B) {
	server, _ := tcpPair(b)
	for _, bc := range []struct {
		name string
		c    net.Conn
	}{{"socket", server.Conn}, {"lazy", server}} {
		b.Run(bc.name, func(b *testing.B) {
			c := bc.c
			for range b.N {
				now := time.Now()
				_ = c.SetReadDeadline(now.Add(60 * time.Second))
				_ = c.SetReadDeadline(now.Add(30 * time.Second))
				_ = c.SetWriteDeadline(now.Add(30 * time.Second))
			}
		})
	}
}

// TestTableTimeouts checks the connection table's sweep against the server's timeouts on the table's own clock:
// a head is judged by the shorter of the head and read timeouts, an idle connection by the idle timeout (the
// read timeout when none), a write that has not returned by the write timeout, on a connection the table has
// closed before too (the 408 of a late head, written to a client that reads nothing); each a tick after its
// limit, never before; a connection being served, or not yet read, is left alone however old.
func TestTableTimeouts(t *testing.T) {
	const tick = 10 // ms
	type conn struct {
		state   uint64
		since   int64 // ms
		writing int64 // when the write began, ms; -1: none
		killed  bool  // closed by the table before (a late head), reads interrupted
	}
	for _, tc := range []struct {
		name   string
		lim    connLimits
		c      conn
		now    int64
		closed bool
		writes bool // its writes interrupted too
	}{
		{"head within the head timeout", connLimits{headTimeout: time.Second, readTimeout: time.Minute}, conn{stateHead, 0, -1, false}, 1000, false, false},
		{"head late", connLimits{headTimeout: time.Second, readTimeout: time.Minute}, conn{stateHead, 0, -1, false}, 1010, true, false},
		{"head late by the read timeout", connLimits{headTimeout: time.Minute, readTimeout: time.Second}, conn{stateHead, 0, -1, false}, 1010, true, false},
		{"head, read timeout only", connLimits{readTimeout: time.Second}, conn{stateHead, 0, -1, false}, 1010, true, false},
		{"head, no timeouts", connLimits{}, conn{stateHead, 0, -1, false}, 1 << 40, false, false},
		{"idle within", connLimits{readTimeout: time.Second, idleTimeout: time.Minute}, conn{stateIdle, 0, -1, false}, 59_000, false, false},
		{"idle late", connLimits{readTimeout: time.Second, idleTimeout: time.Minute}, conn{stateIdle, 0, -1, false}, 60_010, true, false},
		{"idle late by the read timeout", connLimits{readTimeout: time.Second}, conn{stateIdle, 0, -1, false}, 1010, true, false},
		{"served long", connLimits{headTimeout: time.Second, readTimeout: time.Second, idleTimeout: time.Second, writeTimeout: time.Second}, conn{stateServing, 0, -1, false}, 1 << 40, false, false},
		{"not yet read", connLimits{headTimeout: time.Second, readTimeout: time.Second}, conn{stateNew, 0, -1, false}, 1 << 40, false, false},
		{"write within", connLimits{writeTimeout: time.Second}, conn{stateServing, 0, 500, false}, 1500, false, false},
		{"write late", connLimits{writeTimeout: time.Second}, conn{stateServing, 0, 500, false}, 1510, true, true},
		{"write late, idle state", connLimits{writeTimeout: time.Second, idleTimeout: time.Hour}, conn{stateIdle, 1000, 500, false}, 1510, true, true},
		{"write, no write timeout", connLimits{readTimeout: time.Hour}, conn{stateServing, 0, 0, false}, 1 << 40, false, false},
		{"write late after a late head", connLimits{headTimeout: time.Second, writeTimeout: time.Second}, conn{stateClosed, 0, 2000, true}, 3010, true, true},
		{"write within after a late head", connLimits{headTimeout: time.Second, writeTimeout: time.Second}, conn{stateClosed, 0, 2000, true}, 3000, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, _ := tcpPair(t)
			l := newConnTable(nil, tc.lim, nil, new(atomic.Int64))
			tr := &connTrack{sock: server, table: l}
			tr.word.Store(pack(tc.c.state, tc.c.since))
			if tc.c.writing >= 0 {
				tr.writing.Store(tc.c.writing + 1)
			}
			l.mu.Lock()
			l.add(tr)
			if tc.c.killed {
				l.kill(tr, false)
			}
			l.mu.Unlock()
			t.Cleanup(func() { l.mu.Lock(); l.release(tr); l.mu.Unlock() })
			l.expire(tc.now, tick)
			s, _ := unpack(tr.word.Load())
			if got := s == stateClosed; got != tc.closed {
				t.Fatalf("closed = %v, want %v", got, tc.closed)
			}
			if !tc.closed {
				return
			}
			// Closed: a read fails at once; a write fails too when writes were interrupted, else the server may
			// still answer (a 408 to a late head).
			if _, err := server.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("read after the close: %v, want a timeout", err)
			}
			_, err := server.Write([]byte("x"))
			if got := errors.Is(err, os.ErrDeadlineExceeded); got != tc.writes {
				t.Errorf("write after the close: %v; interrupted = %v, want %v", err, got, tc.writes)
			}
		})
	}
}

// TestWriteTimeoutDropsNonReader plays a client that sends request after request on one connection and never
// reads the answers: once the socket's buffers are full the gateway's write blocks, and the write timeout
// closes the connection instead of leaving it held for good. Over TLS: TestWriteTimeoutDropsNonReaderTLS.
func TestWriteTimeoutDropsNonReader(t *testing.T) {
	opt := nonReaderOptions(t)
	gw := startGateway(t, opt)
	checkNonReaderDropped(t, func(d *net.Dialer) (net.Conn, error) {
		return d.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
	})
}

// nonReaderOptions are the gateway's options for checkNonReaderDropped: a short write timeout, hour-long read
// and idle timeouts.
func nonReaderOptions(t *testing.T) Options {
	opt := cachedOptions(coretest.Start(t, coretest.Options{}))
	opt.WriteTimeout, opt.ReadTimeout, opt.IdleTimeout = 300*time.Millisecond, time.Hour, time.Hour
	return opt
}

// checkNonReaderDropped dials the gateway with dial (a short write timeout: nonReaderOptions), sends 100,000
// requests on the connection and reads nothing until the gateway counts a write timeout; then the gateway must
// have closed the connection, having answered only some of them. The answers (about 150 bytes each) are far
// more than the kernel's buffers hold: a send buffer grows to 4 MiB by default (net.ipv4.tcp_wmem), about
// 28,000 answers' worth.
func checkNonReaderDropped(t *testing.T, dial func(*net.Dialer) (net.Conn, error)) {
	before := writeTimeouts.Get()
	d := net.Dialer{Control: testsupport.SmallReceiveBuffer}
	nc, err := dial(&d)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const requests = 100_000
	go func() {
		_, _ = io.WriteString(nc, strings.Repeat("GET /healthz HTTP/1.1\r\nHost: gw.test\r\n\r\n", requests))
	}()
	// The client reads nothing meanwhile.
	if !testsupport.WaitUntil(time.Minute, func() bool { return writeTimeouts.Get() > before }) {
		t.Fatal("reqgate_gateway_connection_timeouts_total{phase=\"write\"} counted no connection in a minute")
	}

	// Closed by the gateway: what it had written is read, then the end (or a reset), well before the gateway's
	// hour-long read and idle timeouts. Left open, the gateway would answer every request and wait.
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	answered := 0
	for ; ; answered++ {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the connection is still open after %d answers", answered)
			}
			break
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if answered >= requests {
		t.Fatalf("all %d requests were answered: the writes never blocked, the test shows nothing", answered)
	}
}

// TestBodyDeadlineEndsWithExchange checks that the read deadline set while a request body is read (its read
// timeout, and with a minimum upload rate the rate's) ends with the exchange: the server sets no deadline of its
// own for the next request, so a deadline left behind would close the kept-alive connection under the next
// request that comes after it.
func TestBodyDeadlineEndsWithExchange(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	for _, rate := range []int64{0, 1} {
		t.Run(map[int64]string{0: "read timeout", 1: "upload rate"}[rate], func(t *testing.T) {
			c := coretest.Start(t, coretest.Options{})
			opt := cachedOptions(c)
			opt.ReadTimeout, opt.IdleTimeout, opt.MinUploadRate, opt.UploadGrace = readTimeout, time.Hour, rate, readTimeout
			if rate == 0 {
				opt.UploadGrace = 0
			}
			gw := startExact(t, opt)
			nc, err := net.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			br := bufio.NewReader(nc)
			const body = `<requirement><fields><field><name>field_101</name><value>kept alive</value></field></fields></requirement>`
			exchange := func(req string) int {
				t.Helper()
				if _, err := io.WriteString(nc, req); err != nil {
					t.Fatal(err)
				}
				_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer on the kept-alive connection: %v", err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res.StatusCode
			}
			auth := "Authorization: Basic ZGVtbzpkZW1v\r\n" // demo:demo
			if s := exchange("PUT /api2/demo/re/1 HTTP/1.1\r\nHost: gw.test\r\n" + auth +
				"Content-Type: application/xml\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body); s != http.StatusOK {
				t.Fatalf("PUT = %d, want 200", s)
			}
			time.Sleep(3 * readTimeout) // past the body's deadline, well within the idle timeout
			if s := exchange("GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw.test\r\n" + auth + "\r\n"); s != http.StatusOK {
				t.Fatalf("GET after the pause = %d, want 200", s)
			}
		})
	}
}
