// Command ceiling is the load test's reference server: a bare fasthttp server that answers every request
// with the bytes of one GET fetched from a URL at start (with the same Content-Type). A gateway cache hit
// can at best match it.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/valyala/fasthttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18089", "address to serve on")
	from := flag.String("from", "", "URL whose body to serve, fetched once at start")
	auth := flag.String("auth", "", "Authorization header for the fetch")
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
		ctx.SetContentType(ctype)
		ctx.SetBody(body)
	}}
	log.Fatal(srv.ListenAndServe(*listen))
}
