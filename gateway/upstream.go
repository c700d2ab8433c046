package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// doer is what the gateway needs of an upstream client: *fasthttp.HostClient or *fasthttp.LBClient.
type doer interface {
	DoTimeout(req *fasthttp.Request, resp *fasthttp.Response, timeout time.Duration) error
}

// upstream is the core (or the cores) behind the gateway.
type upstream struct {
	client  doer
	host    string   // Host header sent upstream (of the first core)
	prefix  string   // path prefix of the upstream URL, "" or "/x"
	origins [][]byte // scheme://host of every core, to recognise its own address in a Location
	timeout time.Duration
}

func newUpstream(o *Options) (*upstream, error) {
	urls := append([]string{o.Upstream}, o.Upstreams...)
	u := &upstream{timeout: o.UpstreamTimeout}
	var clients []*fasthttp.HostClient
	for i, raw := range urls {
		pu, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("gateway: upstream %q: %w", raw, err)
		}
		if pu.Scheme != "http" && pu.Scheme != "https" || pu.Host == "" {
			return nil, fmt.Errorf("gateway: upstream %q: want http://host:port or https://host:port", raw)
		}
		prefix := strings.TrimSuffix(pu.Path, "/")
		if i == 0 {
			u.host, u.prefix = pu.Host, prefix
		} else if prefix != u.prefix {
			return nil, fmt.Errorf("gateway: upstream %q: every upstream needs the same path prefix %q", raw, u.prefix)
		}
		addr := pu.Host
		if pu.Port() == "" {
			if pu.Scheme == "https" {
				addr += ":443"
			} else {
				addr += ":80"
			}
		}
		u.origins = append(u.origins, []byte(pu.Scheme+"://"+pu.Host))
		clients = append(clients, &fasthttp.HostClient{
			Addr:                     addr,
			IsTLS:                    pu.Scheme == "https",
			Name:                     "reqgate-gateway",
			NoDefaultUserAgentHeader: true,
			DialTimeout:              fasthttp.DialDualStackTimeout,
			MaxConns:                 o.MaxIdleConns,
			MaxConnWaitTimeout:       o.MaxConnWait,
			MaxIdleConnDuration:      30 * time.Second,
			ReadTimeout:              o.UpstreamTimeout,
			WriteTimeout:             o.UpstreamTimeout,
			MaxResponseBodySize:      o.MaxResponseBytes,
			ReadBufferSize:           16 << 10,
			DisablePathNormalizing:   true, // the path is normalised once, by route.Parse
			// One retry, for reads only, when a kept-alive connection turned out closed; never for writes,
			// which must not reach the core twice.
			MaxIdemponentCallAttempts: 2,
			RetryIfErr: func(req *fasthttp.Request, attempts int, err error) (bool, bool) {
				return false, attempts < 2 && (req.Header.IsGet() || req.Header.IsHead()) && !isTimeout(err)
			},
		})
	}
	if len(clients) == 1 {
		u.client = clients[0]
		return u, nil
	}
	lb := &fasthttp.LBClient{Timeout: o.UpstreamTimeout}
	for _, c := range clients {
		lb.Clients = append(lb.Clients, c)
	}
	u.client = lb
	return u, nil
}

// do sends req upstream; the error is classified by status.
func (u *upstream) do(req *fasthttp.Request, resp *fasthttp.Response) error {
	return u.client.DoTimeout(req, resp, u.timeout)
}

// upstreamStatus maps a failed upstream exchange to the gateway's answer: 504 for a timeout, 503 when no
// connection came free in time, 502 for everything else (refused, reset, malformed or oversized reply).
func upstreamStatus(err error) (int, string) {
	switch {
	case isTimeout(err):
		return fasthttp.StatusGatewayTimeout, "The upstream service did not answer in time."
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return fasthttp.StatusServiceUnavailable, "The upstream service is busy; try again shortly."
	default:
		return fasthttp.StatusBadGateway, "The upstream service is unavailable."
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
