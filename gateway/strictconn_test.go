package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// guardScan feeds stream to a new lineGuard in pieces of at most size bytes (all at once when size is 0).
// It returns the offset in stream before which the bytes were delivered, the guard, and the violation.
func guardScan(stream []byte, size int) (int, *lineGuard, error) {
	var g lineGuard
	if size <= 0 {
		size = len(stream)
	}
	for base := 0; base < len(stream); base += size {
		piece := stream[base:min(base+size, len(stream))]
		if ok, err := g.scan(piece); err != nil {
			return base + ok, &g, err
		}
	}
	return len(stream), &g, nil
}

// TestLineGuard checks the guard on request streams read whole, byte by byte and cut in two at every
// point: the same violation at the same point, and for a clean stream the guard ends between two messages
// (it followed every body exactly).
func TestLineGuard(t *testing.T) {
	const (
		get  = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
		post = "POST /a HTTP/1.1\r\nHost: h\r\n"
		body = "x\n\ny\r\nGET /b HTTP/1.1\nHost: h\n\n\r\n\r\n"
	)
	cl := post + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	chunkedBody := post + "transfer-encoding:  Chunked \r\n\r\n" +
		"3;ext=1\r\nx\n\n\r\n" + strconv.FormatInt(int64(len(body)-3), 16) + " \r\n" + body[3:] + "\r\n" +
		"0\r\nTrailer-Field: v\r\n\r\n"
	tests := []struct {
		name   string
		stream string
		err    error
		at     int // for a violation, the offset of the first byte that must not be delivered
	}{
		{"request", get, nil, 0},
		{"pipelined requests", get + get + get, nil, 0},
		{"empty lines before the request line", "\r\n\r\n" + get, nil, 0},
		{"content-length body with bare LFs", cl + get, nil, 0},
		{"chunked body with bare LFs", chunkedBody + get, nil, 0},
		{"content-length 0", post + "Content-Length: 0\r\n\r\n" + get, nil, 0},

		{"bare LF ending the request line", "GET /a HTTP/1.1\nHost: h\r\n\r\n", errBareLF, 15},
		{"bare LF ending a field", "GET /a HTTP/1.1\r\nHost: h\n\r\n", errBareLF, 24},
		{"bare LF blank line", "GET /a HTTP/1.1\r\nHost: h\r\n\n", errBareLF, 26},
		{"bare LF before the request line", "\n" + get, errBareLF, 0},
		{"bare LF after a body", cl + "GET /a HTTP/1.1\nHost: h\n\n", errBareLF, len(cl) + 15},
		{"bare CR in a field", "GET /a HTTP/1.1\r\nHost: h\rx\r\n\r\n", errBareCR, 25},
		{"bare CR ending a line", "GET /a HTTP/1.1\r\nHost: h\r\r\n\r\n", errBareCR, 25},
		{"folded field", "GET /a HTTP/1.1\r\nA: b\r\n c\r\n\r\n", errObsFold, 23},
		{"folded field with a tab", "GET /a HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n", errObsFold, 23},
		{"bare LF in a chunk-size line", post + "Transfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", errBareLF, len(post) + 31},
		{"bare LF in a trailer", post + "Transfer-Encoding: chunked\r\n\r\n0\r\nA: b\n\r\n", errBareLF, len(post) + 37},
		{"transfer-encoding identity", post + "Transfer-Encoding: identity\r\n\r\n", errTransferCoding, len(post) + 28},
		{"folded trailer", post + "Transfer-Encoding: chunked\r\n\r\n0\r\nA: b\r\n c\r\n\r\n", errObsFold, len(post) + 39},

		// A framing header the guard cannot read exactly is refused, never followed by a head it no longer
		// checks: a folded one leaves an empty value on its first line.
		{"folded transfer-encoding", post + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\nGET /a HTTP/1.1\n\n", errTransferCoding, len(post) + 19},
		{"folded content-length", post + "Content-Length:\r\n 5\r\n\r\nhelloGET /a HTTP/1.1\n\n", errContentLength, len(post) + 16},
		{"transfer coding other than chunked", post + "Transfer-Encoding: gzip\r\n\r\nGET /a HTTP/1.1\n\n", errTransferCoding, len(post) + 24},
		{"two content-lengths", post + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nGET /a HTTP/1.1\n\n", errContentLength, len(post) + 37},
		{"unreadable content-length", post + "Content-Length: +5\r\n\r\nhelloGET /a HTTP/1.1\n\n", errContentLength, len(post) + 19},

		// A malformed chunk fasthttp refuses: the guard stops checking rather than guess where the next head
		// starts.
		{"malformed chunk size", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\nGET /a HTTP/1.1\n\n", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := []byte(tt.stream)
			check := func(how string, off int, err error, g *lineGuard) {
				t.Helper()
				if !errors.Is(err, tt.err) {
					t.Fatalf("%s: err=%v, want %v", how, err, tt.err)
				}
				if err != nil {
					if off != tt.at {
						t.Fatalf("%s: delivered %d bytes, want %d", how, off, tt.at)
					}
					return
				}
				if g.state != guardLost && (g.state != guardHead || g.headLines != 0 || g.lineN != 0) {
					t.Fatalf("%s: the stream ends inside a message: %+v", how, *g)
				}
			}
			off, g, err := guardScan(stream, 0)
			check("whole", off, err, g)
			off, g, err = guardScan(stream, 1)
			check("byte by byte", off, err, g)
			for cut := 1; cut < len(stream); cut++ {
				var g lineGuard
				off, err := g.scan(stream[:cut])
				if err == nil {
					off, err = g.scan(stream[cut:])
					off += cut
				}
				check("cut at "+strconv.Itoa(cut), off, err, &g)
			}
		})
	}
}

// FuzzLineGuard feeds arbitrary streams to the guard, whole and in pieces: it never panics, and the
// pieces give the violation of the whole stream at the same point.
func FuzzLineGuard(f *testing.F) {
	f.Add([]byte("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"), uint8(3))
	f.Add([]byte("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\n\r\nGET /b HTTP/1.1\n\n"), uint8(7))
	f.Add([]byte("POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\na\nbGET /b HTTP/1.1\r\n x\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, size uint8) {
		off, _, err := guardScan(stream, 0)
		poff, _, perr := guardScan(stream, int(size))
		if !errors.Is(perr, err) {
			t.Fatalf("in pieces of %d: err=%v, whole: %v", size, perr, err)
		}
		if poff != off {
			t.Fatalf("in pieces of %d: delivered %d bytes, whole: %d", size, poff, off)
		}
	})
}

// FuzzLineGuardFraming builds well-formed requests around arbitrary bodies, with Content-Length or
// chunked in arbitrary chunks, and checks that fasthttp and the guard frame them alike: fasthttp reads
// the two requests, and the guard passes the stream and ends between messages.
func FuzzLineGuardFraming(f *testing.F) {
	f.Add([]byte("x\n\ny\r\nGET /b HTTP/1.1\n\n"), false, uint8(4), uint8(5))
	f.Add([]byte("0\r\n\r\n"), true, uint8(1), uint8(1))
	f.Add([]byte{}, true, uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, chunked bool, chunk, size uint8) {
		var b strings.Builder
		b.WriteString("POST /a HTTP/1.1\r\nHost: h\r\n")
		if chunked {
			b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			n := max(int(chunk), 1)
			for rest := body; len(rest) > 0; rest = rest[min(n, len(rest)):] {
				piece := rest[:min(n, len(rest))]
				b.WriteString(strconv.FormatInt(int64(len(piece)), 16) + "\r\n")
				b.Write(piece)
				b.WriteString("\r\n")
			}
			b.WriteString("0\r\n\r\n")
		} else {
			b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
			b.Write(body)
		}
		b.WriteString("GET /b HTTP/1.1\r\nHost: h\r\n\r\n")
		stream := []byte(b.String())

		br := bufio.NewReader(bytes.NewReader(stream))
		var req fasthttp.Request
		if err := req.Read(br); err != nil || !bytes.Equal(req.Body(), body) {
			t.Fatalf("fasthttp: first request: %v, body %q, want %q", err, req.Body(), body)
		}
		req.Reset()
		if err := req.Read(br); err != nil || string(req.RequestURI()) != "/b" || br.Buffered() != 0 {
			t.Fatalf("fasthttp: second request: %v, %q, %d bytes left", err, req.RequestURI(), br.Buffered())
		}

		off, g, err := guardScan(stream, int(size))
		if err != nil || off != len(stream) {
			t.Fatalf("guard: %v at %d", err, off)
		}
		if g.state != guardHead || g.headLines != 0 || g.lineN != 0 {
			t.Fatalf("guard: the stream ends inside a message: %+v", *g)
		}
	})
}

// BenchmarkLineGuard is the guard's cost per request head, as a browser-like client sends it: it runs on
// every read of the gateway's connections, outside BenchmarkHandlerHit.
func BenchmarkLineGuard(b *testing.B) {
	head := []byte("GET " + benchPath + " HTTP/1.1\r\nHost: gw.test\r\nAuthorization: " + benchAuth +
		"\r\nAccept: application/json\r\nUser-Agent: Mozilla/5.0\r\nAccept-Encoding: gzip\r\n\r\n")
	var g lineGuard
	b.SetBytes(int64(len(head)))
	b.ReportAllocs()
	for range b.N {
		if _, err := g.scan(head); err != nil {
			b.Fatal(err)
		}
	}
}
