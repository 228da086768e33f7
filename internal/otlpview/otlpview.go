// Package otlpview is a small OTLP/HTTP receiver that keeps what it
// receives in memory and shows each trace as a waterfall page: enough to
// look at paykit's traces on a laptop without a collector, and to check
// in tests what the example server exports. It takes protobuf
// (application/x-protobuf, optionally gzipped) on /v1/traces and
// /v1/metrics, as the OTLP HTTP exporters send it.
package otlpview

import (
	"cmp"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	metricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span.
type Span struct {
	TraceID, SpanID, ParentID string // hex
	Name                      string
	Kind                      string
	Service                   string // the resource's service.name
	Start, End                time.Time
	Attributes                map[string]string
	Links                     []string // the linked spans' ids
	Error                     bool     // status Error
}

// Collector receives OTLP and serves the pages. Its zero value is ready.
type Collector struct {
	mu      sync.Mutex
	spans   []Span
	metrics map[string]bool
}

// Spans returns the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// Metrics returns the names of the metrics received so far, sorted.
func (c *Collector) Metrics() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n := range c.metrics {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ServeHTTP takes OTLP on POST /v1/traces and /v1/metrics, lists the
// traces on GET / and shows one on GET /trace/{id}.
func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/traces":
		var req tracepb.ExportTraceServiceRequest
		if !readProto(w, r, &req) {
			return
		}
		c.addSpans(&req)
		writeProto(w, &tracepb.ExportTraceServiceResponse{})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/metrics":
		var req metricspb.ExportMetricsServiceRequest
		if !readProto(w, r, &req) {
			return
		}
		c.mu.Lock()
		if c.metrics == nil {
			c.metrics = map[string]bool{}
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					c.metrics[m.Name] = true
				}
			}
		}
		c.mu.Unlock()
		writeProto(w, &metricspb.ExportMetricsServiceResponse{})
	case r.Method == http.MethodGet && r.URL.Path == "/":
		c.serveList(w)
	case r.Method == http.MethodGet && len(r.URL.Path) > len("/trace/") && r.URL.Path[:len("/trace/")] == "/trace/":
		c.serveTrace(w, r.URL.Path[len("/trace/"):])
	default:
		http.NotFound(w, r)
	}
}

// readProto reads r's protobuf body into m, answering 400 when it cannot.
func readProto(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		defer zr.Close()
		body = zr
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func (c *Collector) addSpans(req *tracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		if rs.Resource != nil {
			service = attributes(rs.Resource.Attributes)["service.name"]
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{
					TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentID: hex.EncodeToString(s.ParentSpanId), Name: s.Name, Service: service,
					Kind:  kindNames[int32(s.Kind)],
					Start: time.Unix(0, int64(s.StartTimeUnixNano)), End: time.Unix(0, int64(s.EndTimeUnixNano)),
					Attributes: attributes(s.Attributes),
					Error:      s.Status != nil && s.Status.Code == 2,
				}
				for _, l := range s.Links {
					sp.Links = append(sp.Links, hex.EncodeToString(l.SpanId))
				}
				c.spans = append(c.spans, sp)
			}
		}
	}
}

var kindNames = map[int32]string{1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}

func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return ""
}

// row is a span as the waterfall shows it.
type row struct {
	Span
	Depth             int
	Left, Width       float64 // percent of the trace's time
	Duration          string
	Details, LinkedTo string
}

// traceRows orders a trace's spans depth first, children by start.
func traceRows(spans []Span) ([]row, time.Duration) {
	if len(spans) == 0 {
		return nil, 0
	}
	start, end := spans[0].Start, spans[0].End
	byID := map[string]Span{}
	children := map[string][]Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
		if s.Start.Before(start) {
			start = s.Start
		}
		if s.End.After(end) {
			end = s.End
		}
	}
	var roots []Span
	for _, s := range spans {
		if _, ok := byID[s.ParentID]; ok {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	total := max(end.Sub(start), time.Microsecond)
	var out []row
	var walk func(ss []Span, depth int)
	walk = func(ss []Span, depth int) {
		slices.SortFunc(ss, func(a, b Span) int { return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.SpanID, b.SpanID)) })
		for _, s := range ss {
			r := row{Span: s, Depth: depth,
				Left:     100 * float64(s.Start.Sub(start)) / float64(total),
				Width:    max(0.3, 100*float64(s.End.Sub(s.Start))/float64(total)),
				Duration: s.End.Sub(s.Start).Round(10 * time.Microsecond).String()}
			for _, k := range []string{"http.response.status_code", "paykit.outcome", "paykit.operation", "messaging.message.id", "paykit.merchant_id"} {
				if v, ok := s.Attributes[k]; ok && v != "" {
					r.Details += k + "=" + v + "  "
				}
			}
			for _, l := range s.Links {
				if ls, ok := byID[l]; ok {
					r.LinkedTo = ls.Name
				} else {
					r.LinkedTo = l
				}
			}
			out = append(out, r)
			walk(children[s.SpanID], depth+1)
		}
	}
	walk(roots, 0)
	return out, total
}

func (c *Collector) serveTrace(w http.ResponseWriter, id string) {
	var spans []Span
	for _, s := range c.Spans() {
		if s.TraceID == id {
			spans = append(spans, s)
		}
	}
	rows, total := traceRows(spans)
	if len(rows) == 0 {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = traceTmpl.Execute(w, map[string]any{"ID": id, "Rows": rows, "Total": total.Round(time.Millisecond).String(), "Title": rows[0].Name})
}

func (c *Collector) serveList(w http.ResponseWriter) {
	type summary struct {
		ID, Root, Service string
		Start             time.Time
		Spans             int
	}
	byTrace := map[string]*summary{}
	var order []string
	for _, s := range c.Spans() {
		t, ok := byTrace[s.TraceID]
		if !ok {
			t = &summary{ID: s.TraceID, Start: s.Start}
			byTrace[s.TraceID] = t
			order = append(order, s.TraceID)
		}
		t.Spans++
		if s.ParentID == "" || s.ParentID == "0000000000000000" {
			t.Root, t.Service, t.Start = s.Name, s.Service, s.Start
		}
	}
	var list []*summary
	for _, id := range order {
		list = append(list, byTrace[id])
	}
	slices.SortFunc(list, func(a, b *summary) int { return b.Start.Compare(a.Start) })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = listTmpl.Execute(w, list)
}

const style = `<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#1d2433}
h1{font-size:16px;margin:0 0 12px}
table{border-collapse:collapse;width:100%}
td{padding:3px 6px;border-bottom:1px solid #eef0f4;vertical-align:middle;white-space:nowrap}
td.name{width:34%;overflow:hidden;text-overflow:ellipsis;max-width:420px}
td.bar{width:46%;position:relative}
.b{position:absolute;top:6px;height:12px;border-radius:2px;background:#4c7edb}
.b.consumer{background:#2f9e76}.b.client{background:#8a63d2}.b.err{background:#d64545}
.d{color:#5b6478;font-size:12px}.k{color:#8a93a6;font-size:11px;margin-left:4px}
.l{color:#2f9e76;font-size:12px}
</style>`

var traceTmpl = template.Must(template.New("trace").Parse(`<!doctype html><meta charset="utf-8"><title>{{.Title}}</title>` + style + `
<h1>Trace {{.ID}} · {{.Total}}</h1>
<table>{{range .Rows}}<tr>
<td class="name" style="padding-left:{{.Depth}}em">{{.Name}}<span class="k">{{.Service}} · {{.Kind}}</span>{{if .LinkedTo}}<div class="l">↳ linked to {{.LinkedTo}}</div>{{end}}</td>
<td class="bar"><div class="b {{.Kind}}{{if .Error}} err{{end}}" style="left:{{printf "%.2f" .Left}}%;width:{{printf "%.2f" .Width}}%"></div></td>
<td class="d">{{.Duration}}</td><td class="d">{{.Details}}</td>
</tr>{{end}}</table>`))

var listTmpl = template.Must(template.New("list").Parse(`<!doctype html><meta charset="utf-8"><title>Traces</title>` + style + `
<h1>Traces</h1><table>{{range .}}<tr><td><a href="/trace/{{.ID}}">{{.Root}}</a></td><td class="d">{{.Service}}</td>
<td class="d">{{.Start.Format "15:04:05.000"}}</td><td class="d">{{.Spans}} spans</td></tr>{{end}}</table>`))
