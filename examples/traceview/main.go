// Command traceview receives OTLP over HTTP (protobuf) and shows each
// trace as a waterfall: a viewer for paykit's traces on a laptop without
// a collector or Jaeger.
//
//	go run ./examples/traceview &
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 go run ./examples/server
//
// then open http://127.0.0.1:4318/. It keeps everything in memory.
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/paykit/paykit/internal/otlpview"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4318", "address to listen on: OTLP under /v1/, the pages under /")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: &otlpview.Collector{}, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("traceview: OTLP/HTTP and pages on http://%s/", *addr)
	log.Fatal(srv.ListenAndServe())
}
