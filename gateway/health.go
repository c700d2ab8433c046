package gateway

import (
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/tick"
)

// Health of the cores behind a balancer. A core is judged by its probes and by the requests it serves alike:
//
//   - Every HealthInterval each core's /readyz is asked (GET, short timeout, on a client of its own so that a
//     busy request pool does not read as a dead core).
//   - Every answer of a core (a probe's 200, a request's answer below 500) starts its count of failures again;
//     a failed probe and a request that failed in transport (timeout, connection reset or closed) add one.
//     After healthFailures failures in a row, and no answer between them, the core is taken out. So a probe that
//     times out while the core is busy does not take it out as long as its requests are answered.
//   - A refused connection takes the core out at once: nothing listens there, and the request, never sent, goes
//     to another core.
//   - A core that is out comes back at its first answer, to a probe or to a request tried while every core was
//     out, and then gets a growing share of the requests over SlowStart (slow start) rather than half of them
//     at once.
//
// Taking cores out never leaves the gateway without one: when no core looks healthy the balancer spreads the
// requests over all of them (the panic mode of Envoy), and only a core that refused a connection just now is
// tried last.

// healthFailures is how many failures in a row, probes and requests together, take a core out.
const healthFailures = 3

// minWeight is the share of a core at the start of its slow start, relative to a core at full share: Envoy's
// default minimum of 10%, so that a core that has just come back still gets some requests to prove itself.
const minWeight = 0.1

// prober probes every backend of a balancer until stop.
type prober struct {
	b        *balancer
	interval time.Duration
	timeout  time.Duration
	path     string // prefix + "/readyz"
	host     string // Host header
	stop     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

func (b *balancer) startProber(interval, timeout time.Duration, path, host string) *prober {
	p := &prober{b: b, interval: interval, timeout: timeout, path: path, host: host, stop: make(chan struct{})}
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
	tick.Every(p.stop, p.interval, func() {
		if err := p.check(be); err != nil {
			p.b.failed(be, err, "probe failed")
		} else {
			p.b.answered(be, "probe succeeded")
		}
	})
}

// check asks be for /readyz once.
func (p *prober) check(be *backend) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(p.path)
	req.Header.SetHost(p.host)
	schemeFor(req, be.probe) // else fasthttp refuses to send the probe of an https core
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

// answered records an answer of be: its failures in a row start again from zero, and a core that was out comes
// back (at the start of its slow start).
func (b *balancer) answered(be *backend, why string) {
	if be.fails.Load() != 0 {
		be.fails.Store(0)
	}
	if be.downUntil.Load() != 0 {
		be.downUntil.Store(0)
	}
	if b.probing && !be.up.Load() {
		b.setUp(be, true, why)
	}
}

// failed records a failure of be: a failed probe, or a request that failed in transport. A refused connection
// takes the core out at once, anything else once it is the healthFailures-th failure in a row. Without probes,
// out means resting for downFor.
func (b *balancer) failed(be *backend, err error, why string) {
	now := time.Now().UnixNano()
	// A connection refused (or otherwise failed at once) says nothing listens, and one closed or reset under a
	// request says the core just went away (it was killed or restarted): either takes the core out at once, so
	// its callers' next requests go elsewhere. A connection attempt that timed out may only say the core is
	// busy, like any other timeout, and counts as one failure.
	refused := isDialError(err) && !isTimeout(err) || connectionLost(err) && !isTimeout(err)
	if n := be.fails.Add(1); n < healthFailures && !refused {
		return
	}
	if refused {
		// Refused just now: tried after every other core until downFor has passed, even in panic mode.
		be.downAt.Store(now)
		be.downUntil.Store(now + int64(b.downFor))
	}
	if b.probing {
		b.setUp(be, false, why+": "+err.Error())
		return
	}
	be.downAt.Store(now)
	be.downUntil.Store(now + int64(b.downFor))
	b.warm(be, now+int64(b.downFor))
}

// setUp records a health transition of be: the gauge, the counters and a log line, once per change. A core put
// back starts its slow start.
func (b *balancer) setUp(be *backend, up bool, why string) {
	if be.up.Swap(up) == up {
		return
	}
	if up {
		b.warm(be, time.Now().UnixNano())
		be.upGauge.Set(1)
		metrics.GetOrCreateCounter(`reqgate_gateway_upstream_transitions_total{upstream="` + be.addr + `",to="up"}`).Inc()
		b.log.Info("upstream up", "upstream", be.addr, "reason", why, "slow_start", b.slowStart)
		return
	}
	be.downAt.Store(time.Now().UnixNano())
	be.upGauge.Set(0)
	be.hc.CloseIdleConnections()
	metrics.GetOrCreateCounter(`reqgate_gateway_upstream_transitions_total{upstream="` + be.addr + `",to="down"}`).Inc()
	b.log.Warn("upstream down", "upstream", be.addr, "reason", why)
}

// warm starts be's slow start at from (unix nanoseconds).
func (b *balancer) warm(be *backend, from int64) {
	if b.slowStart > 0 {
		be.warmFrom.Store(from)
	}
}

// weight is be's share at now relative to a core at full share: from minWeight at the start of its slow start
// growing linearly to 1 at its end.
func (b *balancer) weight(be *backend, now int64) float64 {
	from := be.warmFrom.Load()
	if from == 0 {
		return 1
	}
	elapsed := now - from
	if elapsed >= int64(b.slowStart) {
		be.warmFrom.CompareAndSwap(from, 0)
		return 1
	}
	return max(minWeight, float64(elapsed)/float64(b.slowStart))
}
