package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/striped"
)

const headerRequestID = "X-Request-Id"

// hopHeaders are the hop-by-hop headers of RFC 9110 §7.6.1 (and the legacy ones net/http/httputil drops);
// they are removed in both directions, together with every header that Connection names.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

type headerDeleter interface {
	Peek(key string) []byte
	Del(key string)
}

// stripHop removes hop-by-hop headers, first those named in Connection (copied: Del reuses Peek's buffer).
func stripHop(h headerDeleter) {
	if c := h.Peek("Connection"); len(c) > 0 {
		for tok := range strings.SplitSeq(string(c), ",") {
			if t := strings.TrimSpace(tok); t != "" && !strings.EqualFold(t, "close") && !strings.EqualFold(t, "keep-alive") {
				h.Del(t)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// requestIDs makes request ids: a random process prefix and a number, unique without a syscall per request.
// The numbers come from a striped counter, so that requests on two CPUs do not share one cache line for them.
type requestIDs struct {
	prefix string
	n      striped.Counter
}

func newRequestIDs() *requestIDs {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &requestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

// appendNext appends a new id to b, numbered on stripe.
func (r *requestIDs) appendNext(b []byte, stripe uint32) []byte {
	b = append(b, r.prefix...)
	return strconv.AppendUint(b, r.n.Next(stripe), 36)
}

// validRequestID accepts a caller's id when it is short and plain, so it is safe in logs and headers.
func validRequestID(id []byte) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// scheme is the scheme the caller used to reach the gateway.
func connScheme(ctx *fasthttp.RequestCtx) string {
	if ctx.IsTLS() {
		return "https"
	}
	return "http"
}

// rewriteLocation points a Location that names the upstream's own address at the gateway's address as the
// caller used it. The core already builds Location from X-Forwarded-Host/-Proto; this covers a core that
// does not.
func rewriteLocation(h *fasthttp.ResponseHeader, upstreamOrigins [][]byte, publicOrigin string) {
	loc := h.Peek("Location")
	if len(loc) == 0 {
		return
	}
	for _, o := range upstreamOrigins {
		if bytes.HasPrefix(loc, o) && (len(loc) == len(o) || loc[len(o)] == '/') {
			h.Set("Location", publicOrigin+string(loc[len(o):]))
			return
		}
	}
}
