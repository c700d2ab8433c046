package testsupport

import (
	"net"
	"sync"
	"syscall"
	"testing"
)

// SmallReceiveBuffer is a net.Dialer's Control that gives the connection a 4 KiB receive buffer before it is
// made: a client that reads nothing then fills it with the first few answers, and the server's writes block
// once its own send buffer is full.
func SmallReceiveBuffer(_, _ string, rc syscall.RawConn) error {
	return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
}

// ServeTCP listens on addr ("127.0.0.1:0" for a free port) and hands each connection it accepts to handle, on
// a goroutine of its own, closing the connection when handle returns, until the test ends: then it closes the
// listener and every connection it accepted, and waits for the handlers to return. It returns the listener's address. A peer that misbehaves at the TCP
// level (never answers, resets, relays) is a handle of a few lines.
func ServeTCP(tb testing.TB, addr string, handle func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { defer c.Close(); handle(c) })
		}
	})
	return ln.Addr().String()
}
