package gateway

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
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
