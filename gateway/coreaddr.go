package gateway

import (
	"net"

	"github.com/valyala/fasthttp"
)

// coreAddr is the remote address of a connection to a core, with the core's address as upstream.url names it
// (host:port): the access log's upstream field and the label of reqgate_gateway_upstream_up, where the
// connection's own address may be any of the name's IPs.
type coreAddr struct {
	net.Addr
	name string
}

// RemoteAddr is the core's address, its name included: fasthttp's client gives it to each response it reads
// on the connection (Response.RemoteAddr), so that coreOf can tell which core answered.
func (c *coreConn) RemoteAddr() net.Addr { return &c.addr }

// coreOf is the address (as upstream.url names it) of the core resp was read from; "" when none was.
func coreOf(resp *fasthttp.Response) string {
	if a, ok := resp.RemoteAddr().(*coreAddr); ok {
		return a.name
	}
	return ""
}
