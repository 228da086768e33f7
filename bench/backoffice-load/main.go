// Command backoffice-load drives paykit's example server over HTTP for
// bench/backoffice.sh: payment load, single measured payments and reads of
// the merchant and operator APIs. It uses only the contract's HTTP API, so
// it measures any build of the server the same way.
//
//	backoffice-load [-url URL] COMMAND [flags]
//
// The merchant's test key pair is read from BO_PK and BO_SK, the operator
// token from BO_TOKEN (never from the command line, which other users of
// the machine can read). Every command prints key=value results on stdout.
//
//	load      -conc C -duration D: each of C workers creates a payment and
//	          approves it through the test helper, until D has passed
//	create    -n N -conc C [-amount A]: N payments, not approved
//	pairs     -n N -gap G: N payments created and approved one after the
//	          other, G apart
//	recover   [-amount 10902]: one payment of a Provider-timeout amount;
//	          the time from the create's answer until GET shows it succeeded
//	neighbour -n N -gap G: pairs and recover at the same time
//	latency   -n N -sink URL: N times on an idle server, a payment created
//	          and approved, then the time from the approve's answer until
//	          the sink has payment_intent.succeeded for it
//	events    -after T -before T: the merchant's events (GET /v1/events),
//	          all of them and those created in [after, before) (Unix s)
//	merchant  -name NAME: a merchant and a test key pair (operator API);
//	          prints "ID PUBLIC_KEY SECRET_KEY" on one line
//	endpoint  -merchant ID -target URL: a test webhook endpoint for the
//	          merchant (operator API); prints its id
//	jobs      [-kind K] [-expired-ids FILE]: the pending jobs of GET
//	          /operator/jobs, by state and lease
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	baseURL string
	client  *http.Client
)

func main() {
	global := flag.NewFlagSet("backoffice-load", flag.ExitOnError)
	global.StringVar(&baseURL, "url", "http://127.0.0.1:18080", "paykit server")
	_ = global.Parse(os.Args[1:])
	args := global.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: backoffice-load [-url URL] load|create|pairs|recover|neighbour|latency|events|merchant|endpoint|jobs [flags]")
		os.Exit(2)
	}
	client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	cmds := map[string]func([]string) error{
		"load": cmdLoad, "create": cmdCreate, "pairs": cmdPairs, "recover": cmdRecover, "neighbour": cmdNeighbour,
		"latency": cmdLatency, "events": cmdEvents, "merchant": cmdMerchant, "endpoint": cmdEndpoint, "jobs": cmdJobs,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown command", args[0])
		os.Exit(2)
	}
	if err := cmd(args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "backoffice-load:", err)
		os.Exit(1)
	}
}

// --- HTTP -------------------------------------------------------------------

// call sends a request and decodes a JSON answer into out (when not nil).
// It returns the status; an error only when no answer came.
func call(ctx context.Context, method, path string, auth func(*http.Request), body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, baseURL+path, rd)
	if err != nil {
		return 0, err
	}
	auth(req)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost {
		req.Header.Set("Idempotency-Key", "bo-"+randHex(12))
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

func merchantAuth(req *http.Request) { req.SetBasicAuth(os.Getenv("BO_PK"), os.Getenv("BO_SK")) }

func operatorAuth(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+os.Getenv("BO_TOKEN"))
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// payment is the part of a payment intent the tool reads.
type payment struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// refPrefix makes this process's merchant references unique.
var refPrefix = "bo-" + randHex(4)

var refSeq atomic.Int64

func createPayment(ctx context.Context, amount string) (payment, int, error) {
	var p payment
	ref := fmt.Sprintf("%s-%d", refPrefix, refSeq.Add(1))
	st, err := call(ctx, http.MethodPost, "/v1/payment_intents", merchantAuth, map[string]any{
		"amount": amount, "currency": "MYR", "country": "MY", "merchant_reference": ref, "payment_method": "FPX",
		"customer": map[string]string{"name": "A", "email": "a@example.com"},
	}, &p)
	if err == nil && st != http.StatusCreated {
		err = fmt.Errorf("create: status %d", st)
	}
	return p, st, err
}

func approve(ctx context.Context, id string) (payment, int, error) {
	var p payment
	st, err := call(ctx, http.MethodPost, "/v1/test_helpers/payment_intents/"+id+"/approve", merchantAuth, nil, &p)
	if err == nil && st != http.StatusOK {
		err = fmt.Errorf("approve: status %d", st)
	}
	return p, st, err
}

func getPayment(ctx context.Context, id string) (payment, error) {
	var p payment
	st, err := call(ctx, http.MethodGet, "/v1/payment_intents/"+id, merchantAuth, nil, &p)
	if err == nil && st != http.StatusOK {
		err = fmt.Errorf("get: status %d", st)
	}
	return p, err
}

// --- statistics --------------------------------------------------------------

// pct is the nearest-rank percentile p (0..100) of sorted xs; -1 when
// empty.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return -1
	}
	i := int(float64(len(xs))*p/100+0.999999) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func unix(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// list is xs sorted and joined with commas, "-" when empty: one field of a
// key=value line.
func list(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	sort.Strings(xs)
	return strings.Join(xs, ",")
}

// --- commands ---------------------------------------------------------------

func cmdLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	conc := fs.Int("conc", 8, "workers")
	dur := fs.Duration("duration", 10*time.Second, "how long")
	amount := fs.String("amount", "15000", "payment amount (minor units)")
	_ = fs.Parse(args)
	ctx := context.Background()
	var (
		mu                 sync.Mutex
		creates, approves  int
		errs               = map[string]int{}
		createLat, apprLat []float64
		firstErr           string
		start              = time.Now()
		deadline           = start.Add(*dur)
		wg                 sync.WaitGroup
		recordErr          = func(what string, st int, err error) {
			mu.Lock()
			errs[fmt.Sprintf("%s_%d", what, st)]++
			if firstErr == "" {
				firstErr = err.Error()
			}
			mu.Unlock()
		}
	)
	for range *conc {
		wg.Go(func() {
			var cl, al []float64
			var c, a int
			for time.Now().Before(deadline) {
				t := time.Now()
				p, st, err := createPayment(ctx, *amount)
				if err != nil {
					recordErr("create", st, err)
					continue
				}
				cl = append(cl, ms(time.Since(t)))
				c++
				if p.Status != "requires_action" {
					continue
				}
				t = time.Now()
				if _, st, err := approve(ctx, p.ID); err != nil {
					recordErr("approve", st, err)
					continue
				}
				al = append(al, ms(time.Since(t)))
				a++
			}
			mu.Lock()
			creates += c
			approves += a
			createLat = append(createLat, cl...)
			apprLat = append(apprLat, al...)
			mu.Unlock()
		})
	}
	wg.Wait()
	end := time.Now()
	slices.Sort(createLat)
	slices.Sort(apprLat)
	span := end.Sub(start).Seconds()
	nerr := 0
	var kinds []string
	for k, n := range errs {
		nerr += n
		kinds = append(kinds, fmt.Sprintf("%s:%d", k, n))
	}
	fmt.Printf("start_unix=%.6f end_unix=%.6f creates=%d approves=%d errors=%d creates_per_s=%.1f approves_per_s=%.1f create_p50_ms=%.1f create_p99_ms=%.1f approve_p50_ms=%.1f approve_p99_ms=%.1f error_kinds=%s\n",
		unix(start), unix(end), creates, approves, nerr, float64(creates)/span, float64(approves)/span,
		pct(createLat, 50), pct(createLat, 99), pct(apprLat, 50), pct(apprLat, 99), list(kinds))
	if firstErr != "" {
		fmt.Fprintln(os.Stderr, "first error:", firstErr)
	}
	return nil
}

func cmdCreate(args []string) error {
	fs := flag.NewFlagSet("create", flag.ExitOnError)
	n := fs.Int("n", 60, "payments")
	conc := fs.Int("conc", 8, "workers")
	amount := fs.String("amount", "15000", "payment amount (minor units)")
	_ = fs.Parse(args)
	ctx := context.Background()
	var next, ok, bad atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range *conc {
		wg.Go(func() {
			for next.Add(1) <= int64(*n) {
				if _, _, err := createPayment(ctx, *amount); err != nil {
					bad.Add(1)
					fmt.Fprintln(os.Stderr, err)
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Printf("created=%d errors=%d start_unix=%.6f end_unix=%.6f\n", ok.Load(), bad.Load(), unix(start), unix(time.Now()))
	return nil
}

// pairs creates and approves n payments one after the other, gap apart.
func pairs(ctx context.Context, n int, gap time.Duration) (ok, bad int) {
	for i := range n {
		if i > 0 {
			time.Sleep(gap)
		}
		p, _, err := createPayment(ctx, "15000")
		if err == nil {
			_, _, err = approve(ctx, p.ID)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			bad++
			continue
		}
		ok++
	}
	return ok, bad
}

func cmdPairs(args []string) error {
	fs := flag.NewFlagSet("pairs", flag.ExitOnError)
	n := fs.Int("n", 10, "payments")
	gap := fs.Duration("gap", 200*time.Millisecond, "pause between payments")
	_ = fs.Parse(args)
	ok, bad := pairs(context.Background(), *n, *gap)
	fmt.Printf("pairs=%d errors=%d\n", ok, bad)
	return nil
}

// recoverPayment creates a payment of amount and polls it until it is
// final; it returns the time from the create's answer to the poll that saw
// it final, and the final status.
func recoverPayment(ctx context.Context, amount string, poll, maxWait time.Duration) (create, recovery time.Duration, status string, err error) {
	t0 := time.Now()
	p, _, err := createPayment(ctx, amount)
	if err != nil {
		return 0, 0, "", err
	}
	answered := time.Now()
	create = answered.Sub(t0)
	for p.Status == "processing" || p.Status == "requires_action" {
		if time.Since(answered) > maxWait {
			return create, time.Since(answered), p.Status, fmt.Errorf("still %s after %s", p.Status, maxWait)
		}
		time.Sleep(poll)
		if p, err = getPayment(ctx, p.ID); err != nil {
			return create, 0, "", err
		}
	}
	return create, time.Since(answered), p.Status, nil
}

func cmdRecover(args []string) error {
	fs := flag.NewFlagSet("recover", flag.ExitOnError)
	amount := fs.String("amount", "10902", "a Provider-timeout amount (…902)")
	poll := fs.Duration("poll", 100*time.Millisecond, "GET interval")
	maxWait := fs.Duration("max", 300*time.Second, "give up after")
	_ = fs.Parse(args)
	c, r, st, err := recoverPayment(context.Background(), *amount, *poll, *maxWait)
	fmt.Printf("create_s=%.3f recovery_s=%.3f status=%s\n", c.Seconds(), r.Seconds(), st)
	return err
}

func cmdNeighbour(args []string) error {
	fs := flag.NewFlagSet("neighbour", flag.ExitOnError)
	n := fs.Int("n", 10, "payments created and approved")
	gap := fs.Duration("gap", 200*time.Millisecond, "pause between them")
	amount := fs.String("amount", "10902", "the recovered payment's amount (…902)")
	maxWait := fs.Duration("max", 300*time.Second, "give up on the recovery after")
	_ = fs.Parse(args)
	ctx := context.Background()
	var (
		c, r   time.Duration
		st     string
		recErr error
		wg     sync.WaitGroup
	)
	wg.Go(func() { c, r, st, recErr = recoverPayment(ctx, *amount, 100*time.Millisecond, *maxWait) })
	ok, bad := pairs(ctx, *n, *gap)
	wg.Wait()
	fmt.Printf("pairs=%d errors=%d create_s=%.3f recovery_s=%.3f status=%s\n", ok, bad, c.Seconds(), r.Seconds(), st)
	return recErr
}

func cmdLatency(args []string) error {
	fs := flag.NewFlagSet("latency", flag.ExitOnError)
	n := fs.Int("n", 20, "samples")
	sinkURL := fs.String("sink", "http://127.0.0.1:18083", "webhook-sink (its GET /seen)")
	gapMin := fs.Duration("gap-min", 300*time.Millisecond, "shortest pause after a sample's webhook")
	gapMax := fs.Duration("gap-max", 1300*time.Millisecond, "longest pause (random in between, so samples fall anywhere in a poll interval)")
	maxWait := fs.Duration("max", 60*time.Second, "give up on one webhook after")
	_ = fs.Parse(args)
	ctx := context.Background()
	var lags []float64
	missing := 0
	for i := range *n {
		p, _, err := createPayment(ctx, "15000")
		if err != nil {
			return err
		}
		if _, _, err := approve(ctx, p.ID); err != nil {
			return err
		}
		answered := time.Now()
		arrival, err := waitSeen(ctx, *sinkURL, p.ID, "payment_intent.succeeded", *maxWait)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sample %d: %v\n", i+1, err)
			missing++
			continue
		}
		lag := arrival - unix(answered)
		lags = append(lags, lag*1000)
		fmt.Printf("sample=%d payment=%s lag_ms=%.1f\n", i+1, p.ID, lag*1000)
		time.Sleep(*gapMin + time.Duration(mrand.Int64N(int64(*gapMax-*gapMin)+1)))
	}
	slices.Sort(lags)
	fmt.Printf("samples=%d missing=%d p50_ms=%.1f p90_ms=%.1f max_ms=%.1f min_ms=%.1f\n", len(lags), missing,
		pct(lags, 50), pct(lags, 90), pct(lags, 100), pct(lags, 0))
	return nil
}

// waitSeen polls the sink until it has the event typ about object id and
// returns its arrival (Unix seconds, the sink's clock: this machine's).
func waitSeen(ctx context.Context, sinkURL, id, typ string, maxWait time.Duration) (float64, error) {
	u := sinkURL + "/seen?id=" + url.QueryEscape(id) + "&type=" + url.QueryEscape(typ)
	deadline := time.Now().Add(maxWait)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			var t float64
			_, err := fmt.Sscan(string(b), &t)
			return t, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, fmt.Errorf("no %s for %s at the sink within %s", typ, id, maxWait)
}

// listPage is a list envelope.
type listPage[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// pages reads every page of a list.
func pages[T any](ctx context.Context, path string, auth func(*http.Request), each func(T)) error {
	cursor := ""
	for {
		p := path + "limit=100"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		var page listPage[T]
		st, err := call(ctx, http.MethodGet, p, auth, nil, &page)
		if err != nil {
			return err
		}
		if st != http.StatusOK {
			return fmt.Errorf("GET %s: status %d", p, st)
		}
		for _, v := range page.Data {
			each(v)
		}
		if !page.HasMore || page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
}

func cmdEvents(args []string) error {
	fs := flag.NewFlagSet("events", flag.ExitOnError)
	after := fs.Float64("after", 0, "window start (Unix s, inclusive)")
	before := fs.Float64("before", 0, "window end (Unix s, exclusive; 0 = none)")
	_ = fs.Parse(args)
	type ev struct {
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"created_at"`
	}
	total, window := 0, 0
	types := map[string]int{}
	err := pages(context.Background(), "/v1/events?", merchantAuth, func(e ev) {
		total++
		t := unix(e.CreatedAt)
		if t >= *after && (*before == 0 || t < *before) {
			window++
			types[e.Type]++
		}
	})
	if err != nil {
		return err
	}
	var ts []string
	for k, n := range types {
		ts = append(ts, fmt.Sprintf("%s:%d", k, n))
	}
	fmt.Printf("total=%d window=%d window_types=%s\n", total, window, list(ts))
	return nil
}

func cmdMerchant(args []string) error {
	fs := flag.NewFlagSet("merchant", flag.ExitOnError)
	name := fs.String("name", "Bench merchant", "merchant name")
	_ = fs.Parse(args)
	ctx := context.Background()
	var m struct {
		ID string `json:"id"`
	}
	st, err := call(ctx, http.MethodPost, "/operator/merchants", operatorAuth, map[string]string{"name": *name}, &m)
	if err == nil && st != http.StatusCreated {
		err = fmt.Errorf("create merchant: status %d", st)
	}
	if err != nil {
		return err
	}
	var k struct {
		Public string `json:"public_key"`
		Secret string `json:"secret_key"`
	}
	st, err = call(ctx, http.MethodPost, "/operator/merchants/"+m.ID+"/api_keys", operatorAuth, map[string]string{"environment": "test"}, &k)
	if err == nil && st != http.StatusCreated {
		err = fmt.Errorf("create API key: status %d", st)
	}
	if err != nil {
		return err
	}
	fmt.Println(m.ID, k.Public, k.Secret)
	return nil
}

func cmdEndpoint(args []string) error {
	fs := flag.NewFlagSet("endpoint", flag.ExitOnError)
	merchant := fs.String("merchant", "mch_demo", "merchant id")
	target := fs.String("target", "", "the endpoint's URL")
	_ = fs.Parse(args)
	var e struct {
		ID string `json:"id"`
	}
	st, err := call(context.Background(), http.MethodPost, "/operator/merchants/"+*merchant+"/webhook_endpoints", operatorAuth,
		map[string]string{"environment": "test", "url": *target}, &e)
	if err == nil && st != http.StatusCreated {
		err = fmt.Errorf("create webhook endpoint: status %d", st)
	}
	if err != nil {
		return err
	}
	fmt.Println(e.ID)
	return nil
}

func cmdJobs(args []string) error {
	fs := flag.NewFlagSet("jobs", flag.ExitOnError)
	kind := fs.String("kind", "", "job kind (empty: all)")
	expiredIDs := fs.String("expired-ids", "", "write the target ids of the jobs whose lease has ended to this file")
	_ = fs.Parse(args)
	type job struct {
		State      string           `json:"state"`
		TargetID   string           `json:"target_id"`
		Attempts   int              `json:"attempts"`
		LeaseUntil *json.RawMessage `json:"lease_until"`
	}
	path := "/operator/jobs?"
	if *kind != "" {
		path += "kind=" + url.QueryEscape(*kind) + "&"
	}
	now := time.Now()
	states := map[string]int{}
	pending, live, expired, noLeaseField := 0, 0, 0, 0
	var ids []string
	err := pages(context.Background(), path, operatorAuth, func(j job) {
		pending++
		states[j.State]++
		if j.LeaseUntil == nil || string(*j.LeaseUntil) == "null" {
			// absent or null: the answer does not say (or there is no lease)
			if j.LeaseUntil == nil {
				noLeaseField++
			}
			return
		}
		var until time.Time
		if err := json.Unmarshal(*j.LeaseUntil, &until); err != nil {
			return
		}
		if until.After(now) {
			live++
			return
		}
		expired++
		ids = append(ids, j.TargetID)
	})
	if err != nil {
		return err
	}
	var ss []string
	for k, n := range states {
		ss = append(ss, fmt.Sprintf("%s:%d", k, n))
	}
	exp := fmt.Sprint(expired)
	if noLeaseField == pending && pending > 0 {
		exp = "NA" // this server's job list shows no lease
	}
	if *expiredIDs != "" {
		if err := os.WriteFile(*expiredIDs, []byte(strings.Join(append(ids, ""), "\n")), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("pending=%d lease_live=%d lease_expired=%s states=%s\n", pending, live, exp, list(ss))
	return nil
}
