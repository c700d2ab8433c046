package gateway

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ServeTLS is Serve with TLS terminated on ln, config presenting the certificate (gateway/certs builds one that
// follows certificate reloads). The connection table (conns.go) counts the raw connections, before any
// handshake, and refuses one over a cap by closing it (a TLS client could not read the plain-text answers Serve
// writes). The handshake runs when the server first reads a connection, within the head timeout and the read
// timeout (counted from the connection's acceptance): a client that opens a connection and sends no
// ClientHello is dropped when the first of them passes. The gateway answers over HTTP/1.1 only; fasthttp has no
// HTTP/2.
func (g *Gateway) ServeTLS(ln net.Listener, config *tls.Config) error {
	if config == nil {
		return errors.New("gateway: serve TLS: no TLS configuration")
	}
	l := g.connTable(deadlineListener{ln})
	l.refusal, l.full = nil, nil // a TLS client could not read them
	stop := make(chan struct{})
	defer close(stop)
	go l.sweep(stop)
	if err := g.srv.Serve(tlsListener{Listener: l, config: config}); err != nil {
		return fmt.Errorf("gateway: serve TLS: %w", err)
	}
	return nil
}

// tlsListener makes every connection the connection limit accepts a TLS server connection, and puts the line
// guard (strictconn.go) over the decrypted stream.
type tlsListener struct {
	net.Listener
	config *tls.Config
}

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := tls.Server(c, l.config) // the handshake waits for the first read or write
	sc := &strictConn{keepAlive: keepAlive{tc}}
	out := &tlsConn{conn: conn{Conn: sc, stripe: nextStripe.Add(1)}, tls: tc}
	if in, ok := c.(*conn); ok && in.t != nil {
		sc.t, in.t.guard = in.t, &sc.guard
		out.t, out.l = in.t, in.l
	}
	return out, nil
}

// tlsConn is an accepted TLS connection as the server sees it. Its Handshake and ConnectionState make
// fasthttp treat it as TLS: the server runs the handshake on its first read, and the request's IsTLS is
// true, so the scheme the gateway reports and forwards (X-Forwarded-Proto) is https. Its conn carries the
// credential memo; the connection counted by the limit is inside the TLS connection and gives its place back
// when the TLS connection closes.
type tlsConn struct {
	conn
	tls *tls.Conn
}

// Write writes through TLS; the write timeout stamps the connection beneath, which TLS writes to (conn.Write).
func (c *tlsConn) Write(p []byte) (int, error) { return c.conn.Conn.Write(p) }

// Handshake runs the TLS handshake. A client that sent plain HTTP to the TLS port gets a plain-text 400
// saying so, as net/http answers it, instead of a connection closed without a word.
func (c *tlsConn) Handshake() error {
	err := c.tls.Handshake()
	if re, ok := errors.AsType[tls.RecordHeaderError](err); ok && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
		_ = re.Conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = io.WriteString(re.Conn, plainHTTPRefusal)
	}
	return err
}

const plainHTTPRefusal = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: 51\r\nConnection: close\r\n\r\nThis port speaks HTTPS; the request was plain HTTP."

// looksLikeHTTP reports whether the first five bytes of a connection, read as a TLS record header, are the
// start of an HTTP/1.x request.
func looksLikeHTTP(h [5]byte) bool {
	switch string(h[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH":
		return true
	}
	return false
}

func (c *tlsConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// connOf is a connection the gateway accepted, with the memos of its last request (nil for a connection of a
// server of the caller's own).
func connOf(nc net.Conn) *conn {
	switch c := nc.(type) {
	case *conn:
		return c
	case *tlsConn:
		return &c.conn
	}
	return nil
}
