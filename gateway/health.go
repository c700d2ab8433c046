package gateway

import (
	"log/slog"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// Health checks of the cores behind a balancer. Every HealthInterval each core's /readyz is asked (GET, short
// timeout, on a client of its own so that a busy request pool does not read as a dead core). A core is taken
// out after healthFailures failed probes in a row, or at once when it refuses the connection, and put back
// after one successful probe. Requests also take a core out when it refuses a connection or drops one under
// a request; the prober puts it back.

// healthFailures is how many failed probes in a row take a core out (a refused connection takes it out at once).
const healthFailures = 2

// prober probes every backend of a balancer until stop.
type prober struct {
	b        *balancer
	interval time.Duration
	timeout  time.Duration
	path     string // prefix + "/readyz"
	host     string // Host header
	log      *slog.Logger
	stop     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

func (b *balancer) startProber(interval, timeout time.Duration, path, host string, log *slog.Logger) *prober {
	p := &prober{b: b, interval: interval, timeout: timeout, path: path, host: host, log: log,
		stop: make(chan struct{})}
	for _, be := range b.backends {
		p.wg.Add(1)
		go p.run(be)
	}
	return p
}

// Stop ends the probes and waits for them.
func (p *prober) Stop() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
}

// run probes one backend, each on its own goroutine so that a slow core does not delay the others.
func (p *prober) run(be *backend) {
	defer p.wg.Done()
	defer be.probe.CloseIdleConnections()
	t := time.NewTicker(p.interval)
	defer t.Stop()
	fails := 0
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		err := p.check(be)
		if err == nil {
			fails = 0
			p.b.setUp(be, true, "probe succeeded")
			continue
		}
		fails++
		if fails >= healthFailures || isDialError(err) {
			p.b.setUp(be, false, "probe failed: "+err.Error())
		}
	}
}

// check asks be for /readyz once.
func (p *prober) check(be *backend) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(p.path)
	req.Header.SetHost(p.host)
	if err := be.probe.DoTimeout(req, resp, p.timeout); err != nil {
		return err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return errNotReady{resp.StatusCode()}
	}
	return nil
}

type errNotReady struct{ status int }

func (e errNotReady) Error() string { return "/readyz answered " + fasthttp.StatusMessage(e.status) }

// setUp records a health transition of be: the gauge, the counters and a log line, once per change.
func (b *balancer) setUp(be *backend, up bool, why string) {
	if be.up.Swap(up) == up {
		return
	}
	if up {
		be.upGauge.Set(1)
		metrics.GetOrCreateCounter(`reqgate_gateway_upstream_transitions_total{upstream="` + be.addr + `",to="up"}`).Inc()
		b.log.Info("upstream up", "upstream", be.addr, "reason", why)
		return
	}
	be.downAt.Store(time.Now().UnixNano())
	be.upGauge.Set(0)
	be.hc.CloseIdleConnections()
	metrics.GetOrCreateCounter(`reqgate_gateway_upstream_transitions_total{upstream="` + be.addr + `",to="down"}`).Inc()
	b.log.Warn("upstream down", "upstream", be.addr, "reason", why)
}
