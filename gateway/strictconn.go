package gateway

import (
	"bytes"
	"net"
	"time"
)

// strictListener gives every accepted connection a lineGuard (strictConn), the part of the gateway's
// HTTP/1.1 rules that only the bytes on the wire show.
//
// fasthttp's parser takes a bare LF as a line end in the request line and between header fields, but only
// takes the header block as complete once a CRLFCRLF has arrived: a request written with bare LFs alone
// ("GET / HTTP/1.1\nHost: a\n\n") is neither answered nor refused, the connection waits for the read
// timeout. It also joins obsolete line folding into the field value, where the handler cannot see it. The
// guard follows the message framing on the connection (request heads, Content-Length and chunked bodies)
// and refuses, the moment it arrives, a head or chunk line that holds a bare LF, a bare CR or a folded
// line, and the one transfer coding fasthttp ignores instead of refusing (identity). RFC 9112 §2.2 lets a
// recipient accept a bare LF; refusing it is simpler and leaves no room for a server behind the gateway to
// split the request elsewhere.
type strictListener struct{ net.Listener }

func (l strictListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &strictConn{keepAlive: keepAlive{c}}, nil
}

// strictConn is a connection whose reads pass through a lineGuard. The bytes before a violation are
// delivered; the read after them fails with the violation, which fasthttp hands to the server's
// ErrorHandler (serverError) as it does its own parse errors.
type strictConn struct {
	keepAlive
	guard lineGuard
	err   error
	// t is the connection's record in the connection table (conns.go), told where each head starts and ends;
	// seen is how many heads it was told of.
	t    *connTrack
	seen uint64
}

func (c *strictConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if ok, verr := c.guard.scan(p[:n]); verr != nil {
			c.err = verr
			if ok > 0 {
				return ok, nil
			}
			return 0, verr
		}
		if t := c.t; t != nil && (c.guard.ended != c.seen || t.state == stateIdle && c.guard.reading()) {
			ended := int(c.guard.ended - c.seen)
			c.seen = c.guard.ended
			if terr := t.heads(ended, c.guard.reading(), t.table.clock.Load()); terr != nil {
				return 0, terr
			}
		}
	}
	return n, err
}

// keepAlive is a connection wrapper's base: it passes fasthttp's TCPKeepalive settings on to the connection it
// wraps, which a wrapper's own method set would otherwise hide.
type keepAlive struct{ net.Conn }

func (k keepAlive) SetKeepAlive(on bool) error {
	if tc, ok := k.Conn.(interface{ SetKeepAlive(bool) error }); ok {
		return tc.SetKeepAlive(on)
	}
	return nil
}

// NetConn is the connection the wrapper wraps (as tls.Conn's NetConn), for a look at the socket (peerClosed).
func (k keepAlive) NetConn() net.Conn { return k.Conn }

func (k keepAlive) SetKeepAlivePeriod(d time.Duration) error {
	if tc, ok := k.Conn.(interface{ SetKeepAlivePeriod(time.Duration) error }); ok {
		return tc.SetKeepAlivePeriod(d)
	}
	return nil
}

// lineError is a request refused by the lineGuard; serverError answers it with 400 and its message.
type lineError string

func (e lineError) Error() string { return string(e) }

const (
	errBareLF  lineError = "A line of the request ends in a bare LF; HTTP/1.1 lines end in CRLF."
	errBareCR  lineError = "The request holds a CR that does not end a line."
	errObsFold lineError = "A header field is folded over several lines (obsolete line folding)."

	errTransferCoding lineError = "The request's Transfer-Encoding is not chunked."
	errContentLength  lineError = "The request's Content-Length is empty, unreadable or given twice."
)

// lineKeep is how much of a line the guard keeps when the line spans reads: enough for the Content-Length,
// Transfer-Encoding and chunk-size lines it must understand. A longer framing header is refused; a longer
// chunk-size line makes it stop checking the connection (guardLost): it only follows what it can read exactly.
const lineKeep = 128

// maxBody bounds a Content-Length or chunk size the guard follows: fasthttp refuses larger ones.
const maxBody = 1<<60 - 1

type guardState uint8

const (
	guardHead      guardState = iota // request line and header fields
	guardBody                        // Content-Length body
	guardChunkSize                   // chunk-size line
	guardChunkData                   // chunk data
	guardChunkCRLF                   // the CRLF after chunk data
	guardTrailer                     // trailer fields after the last chunk
	guardLost                        // framing not followed: no more checks on this connection
)

// lineGuard follows the HTTP/1.1 message framing of one connection's request stream and checks the lines
// of every request head, chunk-size line and trailer section: each must end in CRLF, hold no other CR and,
// in a head or trailer, not start with a space or tab (obsolete line folding, RFC 9112 §5.2). It frames
// messages as fasthttp does: empty lines before a request line are skipped, Transfer-Encoding: chunked wins
// over Content-Length, and a request without either has no body. What fasthttp would refuse (two
// A framing header the guard cannot read exactly (empty, unreadable, too long, a second Content-Length, a
// coding other than chunked) is refused as a violation: such a field is where a folded or otherwise hidden
// value would change the framing, so the guard never gives up on a head. A malformed chunk makes it stop
// checking rather than guess: fasthttp refuses the request and closes the connection.
type lineGuard struct {
	state  guardState
	remain int64 // bytes of the body or chunk still to come

	// The line being read when it spans reads: its first lineKeep bytes, its length so far, whether its
	// last byte so far is a CR.
	line  [lineKeep]byte
	lineN int
	cr    bool

	// The head being read.
	headLines int   // lines so far, the request line included
	length    int64 // its Content-Length, if hasLength
	hasLength bool
	chunked   bool

	// In guardChunkCRLF, how many bytes of the CRLF have arrived.
	crlfN int

	// ended counts the heads read to their end.
	ended uint64
}

// reading reports whether part of a request head has arrived, but not its end.
func (g *lineGuard) reading() bool {
	return g.state == guardHead && (g.headLines > 0 || g.lineN > 0)
}

// scan checks the next bytes of the stream. It returns how many of them precede a violation and the
// violation, or len(p) and nil.
func (g *lineGuard) scan(p []byte) (int, error) {
	off := 0
	for off < len(p) {
		switch g.state {
		case guardLost:
			return len(p), nil
		case guardBody, guardChunkData:
			k := int(min(g.remain, int64(len(p)-off)))
			g.remain -= int64(k)
			off += k
			if g.remain == 0 {
				if g.state == guardBody {
					g.startHead()
				} else {
					g.state, g.crlfN = guardChunkCRLF, 0
				}
			}
		case guardChunkCRLF:
			if p[off] != "\r\n"[g.crlfN] {
				g.state = guardLost // fasthttp refuses a chunk not followed by CRLF
				return len(p), nil
			}
			off++
			if g.crlfN++; g.crlfN == 2 {
				g.state = guardChunkSize
			}
		default:
			n, err := g.lines(p[off:])
			if err != nil {
				return off + n, err
			}
			off += n
		}
	}
	return len(p), nil
}

// lines reads line bytes from p, in a head, chunk-size line or trailer section, up to the end of the
// first line that changes the state (or all of p). It returns the bytes consumed, or the offset of a
// violation and the violation.
func (g *lineGuard) lines(p []byte) (int, error) {
	off := 0
	for off < len(p) {
		rest := p[off:]
		if g.folds(rest[0]) {
			return off, errObsFold
		}
		i := bytes.IndexByte(rest, '\n')
		seg := rest
		if i >= 0 {
			seg = rest[:i]
		}
		// A CR may only come right before the LF. The CR itself is delivered, whether or not the byte after
		// it has arrived, so that cutting the stream anywhere refuses it at the same point.
		if g.cr && len(seg) > 0 {
			return off, errBareCR
		}
		if j := bytes.IndexByte(seg, '\r'); j >= 0 && j < len(seg)-1 {
			return off + j + 1, errBareCR
		}
		if i < 0 {
			g.cr = g.endsInCR(seg)
			g.keep(seg)
			return len(p), nil
		}
		if !g.endsInCR(seg) {
			return off + i, errBareLF
		}
		line, n := g.complete(seg)
		state := g.state
		if err := g.endLine(line, n); err != nil {
			return off + i, err // the line's LF is withheld: without it the head cannot end
		}
		off += i + 1
		if g.state != state {
			return off, nil
		}
	}
	return off, nil
}

// folds reports whether a line whose first byte is c would be folded (obsolete line folding): c is a space
// or tab at the start of a field line, in a head after the request line or in a trailer section.
func (g *lineGuard) folds(c byte) bool {
	return g.lineN == 0 && (c == ' ' || c == '\t') &&
		(g.state == guardHead && g.headLines > 0 || g.state == guardTrailer)
}

// endsInCR reports whether the line read so far, with seg, ends in a CR.
func (g *lineGuard) endsInCR(seg []byte) bool {
	if len(seg) == 0 {
		return g.cr
	}
	return seg[len(seg)-1] == '\r'
}

// complete ends the line being read with seg, its last bytes before the LF (the CR included), and returns
// the line without its CRLF: all of it, or its first lineKeep bytes when it spans reads, and its length.
func (g *lineGuard) complete(seg []byte) ([]byte, int) {
	if g.lineN == 0 {
		return seg[:len(seg)-1], len(seg) - 1 // the whole line is in p: no copy
	}
	g.keep(seg)
	n := g.lineN - 1
	g.lineN, g.cr = 0, false
	return g.line[:min(n, lineKeep)], n
}

// keep adds seg to the line being read.
func (g *lineGuard) keep(seg []byte) {
	if g.lineN < lineKeep {
		copy(g.line[g.lineN:], seg)
	}
	g.lineN += len(seg)
}

// endLine handles a complete line without its CRLF; line holds its first bytes (all of them when n is at
// most lineKeep), n is its length.
func (g *lineGuard) endLine(line []byte, n int) error {
	switch g.state {
	case guardChunkSize:
		g.chunkSizeLine(line, n <= lineKeep)
	case guardTrailer:
		if n == 0 {
			g.startHead()
		}
	default: // guardHead
		if n == 0 {
			g.endHead()
			return nil
		}
		if g.headLines++; g.headLines > 1 { // the first line is the request line
			return g.fieldLine(line, n <= lineKeep)
		}
	}
	return nil
}

// chunkSizeLine follows a chunk-size line: to its chunk's data, or to the trailer section after the last
// chunk.
func (g *lineGuard) chunkSizeLine(line []byte, whole bool) {
	size, ok := chunkSize(line)
	switch {
	case !ok || !whole:
		g.state = guardLost
	case size == 0:
		g.state = guardTrailer
	default:
		g.state, g.remain = guardChunkData, size
	}
}

// fieldLine notes the fields of a head that frame its message.
func (g *lineGuard) fieldLine(line []byte, whole bool) error {
	// fasthttp refuses a space before the colon, so a framing header's colon is right after its name.
	switch {
	case len(line) > 14 && line[14] == ':' && equalFoldASCII(line[:14], "Content-Length"):
		return g.contentLength(line[15:], whole)
	case len(line) > 17 && line[17] == ':' && equalFoldASCII(line[:17], "Transfer-Encoding"):
		return g.transferEncoding(line[18:], whole)
	}
	return nil
}

// endHead follows the empty line after a head to the message's body, or to the next head when it has none.
func (g *lineGuard) endHead() {
	if g.headLines == 0 {
		return // RFC 9112 §2.2: empty lines before the request line are ignored
	}
	g.ended++
	switch {
	case g.chunked:
		g.state = guardChunkSize
	case g.hasLength && g.length > 0:
		g.state, g.remain = guardBody, g.length
	default:
		g.startHead()
	}
}

// contentLength notes the value of a Content-Length field. One the guard cannot read (an empty value among
// them, as the first line of a folded field leaves it), or a second one, is refused: the guard does not
// follow a head whose framing it cannot read.
func (g *lineGuard) contentLength(v []byte, whole bool) error {
	n, ok := decimal(trimOWS(v))
	if !ok || !whole || g.hasLength {
		return errContentLength
	}
	g.length, g.hasLength = n, true
	return nil
}

// transferEncoding notes the value of a Transfer-Encoding field: chunked, or anything else, refused. That
// covers identity, which fasthttp ignores as if the field were absent where RFC 9112 §6.3 requires 400 (a
// request whose transfer codings do not end in chunked has no length another server could agree on), and
// an empty value, the first line of a folded field, which fasthttp would join with the next line.
func (g *lineGuard) transferEncoding(v []byte, whole bool) error {
	if !whole || !equalFoldASCII(trimOWS(v), "chunked") {
		return errTransferCoding
	}
	g.chunked = true
	return nil
}

// startHead makes the guard expect the next request head.
func (g *lineGuard) startHead() {
	g.state, g.headLines, g.hasLength, g.chunked = guardHead, 0, false, false
}

// trimOWS removes spaces and tabs around v.
func trimOWS(v []byte) []byte {
	return bytes.Trim(v, " \t")
}

// decimal parses a Content-Length value: digits only.
func decimal(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if n > maxBody {
			return 0, false
		}
	}
	return n, true
}

// chunkSize parses a chunk-size line without its CRLF as fasthttp does: one to 15 hex digits, then
// nothing but spaces and tabs, or a ';' and chunk extensions.
func chunkSize(line []byte) (int64, bool) {
	var n int64
	digits := 0
	for digits < len(line) {
		d, ok := hexDigit(line[digits])
		if !ok {
			break
		}
		if digits == 15 {
			return 0, false
		}
		n = n<<4 | int64(d)
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	rest := line[digits:]
	if len(rest) > 0 && rest[0] == ';' || len(bytes.Trim(rest, " \t")) == 0 {
		return n, true
	}
	return 0, false
}

func hexDigit(c byte) (byte, bool) {
	switch l := c | 0x20; {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= l && l <= 'f':
		return l - 'a' + 10, true
	}
	return 0, false
}
