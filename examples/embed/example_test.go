package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// Example starts the program on a free port and takes a sandbox payment
// through it over HTTP with the test keys it printed: the merchant creates
// a payment intent, the test helper approves it as the payer would at the
// sandbox PSP's page, and GET shows it succeeded.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := start(ctx, "")
	if err != nil {
		panic(err)
	}

	status, pi := s.merchant("POST", "/v1/payment_intents", `{"amount":"15000","currency":"MYR","country":"MY",
		"merchant_reference":"order-1","payment_method":"TNG","customer":{"name":"Aisyah"}}`)
	fmt.Println(status, pi["status"])
	id := pi["id"].(string)
	status, pi = s.merchant("POST", "/v1/test_helpers/payment_intents/"+id+"/approve", "")
	fmt.Println(status, pi["status"])
	status, pi = s.merchant("GET", "/v1/payment_intents/"+id, "")
	fmt.Println(status, pi["status"], pi["captured_amount"])
	// Output:
	// 201 requires_action
	// 200 succeeded
	// 200 succeeded 15000
}

// running is the program serving on a loopback port.
type running struct {
	url     string            // from "paykit listening on URL"
	printed map[string]string // the other lines it printed, "test public key" → "pk_test_…"
	done    chan error        // what serve returned
}

// start runs serve on 127.0.0.1:0 until ctx ends and reads what it prints.
func start(ctx context.Context, operatorToken string) (*running, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r, w := io.Pipe()
	s := &running{printed: map[string]string{}, done: make(chan error, 1)}
	go func() {
		err := serve(ctx, ln, operatorToken, w)
		w.CloseWithError(fmt.Errorf("serve returned %v", err))
		s.done <- err
	}()
	lines := bufio.NewScanner(r)
	for len(s.printed) < 4 && lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "paykit listening on "); ok {
			s.url = u
		} else if name, value, ok := strings.Cut(lines.Text(), ":"); ok {
			s.printed[name] = strings.TrimSpace(value)
		}
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	go io.Copy(io.Discard, r) // nothing more is printed; never block serve
	return s, nil
}

// merchant calls the merchant API with the printed test keys and returns
// the status and the decoded body. A POST with a body (a create) carries a
// fresh Idempotency-Key.
func (s *running) merchant(method, path, body string) (int, map[string]any) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.SetBasicAuth(s.printed["test public key"], s.printed["test secret key"])
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", rand.Text())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		panic(err)
	}
	return resp.StatusCode, v
}
