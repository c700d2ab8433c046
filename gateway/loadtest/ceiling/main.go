// Command ceiling is the load test's reference server: a bare fasthttp server that answers every request
// with the bytes of one GET fetched from a URL at start (with the same Content-Type). A gateway cache hit
// can at best match it.
//
// With -work it first keeps the CPU busy for that long on each request: a Go server doing as much work per
// request as the gateway but nothing else, so that what the gateway pays beyond its work (scheduling, idle
// CPUs waiting for a wake-up) can be told from what any Go server that busy pays.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18089", "address to serve on")
	from := flag.String("from", "", "URL whose body to serve, fetched once at start")
	auth := flag.String("auth", "", "Authorization header for the fetch")
	work := flag.Duration("work", 0, "CPU time to spend on each request before answering (a busy loop)")
	flag.Parse()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.SetRequestURI(*from)
	if *auth != "" {
		req.Header.Set("Authorization", *auth)
	}
	if err := fasthttp.Do(req, resp); err != nil || resp.StatusCode() != 200 {
		fmt.Fprintf(os.Stderr, "ceiling: fetch %s: status %d, err %v\n", *from, resp.StatusCode(), err)
		os.Exit(1)
	}
	body := append([]byte(nil), resp.Body()...)
	ctype := string(resp.Header.ContentType())
	srv := &fasthttp.Server{NoDefaultServerHeader: true, Handler: func(ctx *fasthttp.RequestCtx) {
		busy(*work)
		ctx.SetContentType(ctype)
		ctx.SetBody(body)
	}}
	log.Fatal(srv.ListenAndServe(*listen))
}

var spun atomic.Uint64 // the busy loop's sum, kept so that the loop is not optimised away

// busy keeps the CPU busy for d, in steps short next to it (a clock read every 64 additions).
func busy(d time.Duration) {
	if d <= 0 {
		return
	}
	var sum uint64
	for start := time.Now(); time.Since(start) < d; {
		for i := range uint64(64) {
			sum += i
		}
	}
	spun.Add(sum)
}
