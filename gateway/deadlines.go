package gateway

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// deadlineListener gives every accepted connection lazily moved socket deadlines (deadlineConn).
type deadlineListener struct{ net.Listener }

func (l deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &deadlineConn{keepAlive: keepAlive{c}}, nil
}

// deadlineConn moves a socket's deadlines only when it must. A paced request body (body.go) moves the read
// deadline a little later with every read, and every move of a socket deadline is a timer operation in the
// runtime. The connection remembers the deadline asked for and arms the socket only with an earlier one; when
// the armed deadline passes first, the read or write is re-armed with the deadline asked for and goes on. A
// caller sees a timeout exactly when its own deadline has passed, as with a plain connection; the socket's
// timer fires about once per period instead of being moved with every read. (The server's own timeouts are
// the connection table's, conns.go: it sets no deadlines.)
//
// The deadlines are guarded by a mutex: another goroutine may set one to interrupt a blocked read (a deadline
// in the past), and that must take effect at once, whatever a concurrent re-arm does.
type deadlineConn struct {
	keepAlive
	mu          sync.Mutex
	read, write deadline
}

// deadline is one direction's deadline as asked for (want) and as armed on the socket (armed); the zero time
// is none. armed is never later than want: the socket times out no later than asked.
type deadline struct{ want, armed time.Time }

// set records t as asked for and tells whether the socket must be armed with it now: t is earlier than the
// armed deadline (or the socket has none). A later t, or none, waits for the armed one to pass.
func (d *deadline) set(t time.Time) bool {
	d.want = t
	if t.IsZero() || !d.armed.IsZero() && !d.armed.After(t) {
		return false
	}
	d.armed = t
	return true
}

// rearm is called when the armed deadline has passed. It reports whether the one asked for is still ahead,
// and if so arms the socket with it (through arm) so the operation can go on.
func (c *deadlineConn) rearm(d *deadline, arm func(time.Time) error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !d.want.IsZero() && !time.Now().Before(d.want) {
		return false
	}
	d.armed = d.want
	return arm(d.want) == nil
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	return c.set(&c.read, t, c.Conn.SetReadDeadline)
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	return c.set(&c.write, t, c.Conn.SetWriteDeadline)
}

// set records t as d's deadline and arms the socket (through arm) when it must.
func (c *deadlineConn) set(d *deadline, t time.Time, arm func(time.Time) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.set(t) {
		return arm(t)
	}
	return nil
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !c.rearm(&c.read, c.Conn.SetReadDeadline) {
			return n, err
		}
	}
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	written := 0
	for {
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || !c.rearm(&c.write, c.Conn.SetWriteDeadline) {
			return written, err
		}
	}
}
