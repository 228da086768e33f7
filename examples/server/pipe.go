package main

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// pipeListener is a net.Listener whose connections are in-memory pipes
// made by its dial: the sandbox adapter reaches the PSP in this process
// through it, speaking HTTP as to a remote PSP (holds and dropped
// connections included) without a loopback socket.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener: later dials fail as a refused connection would.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects to the listener.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "pipe", Err: net.ErrClosed}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// client is an HTTP client whose connections go to l; it follows no
// redirects, as the adapter's default client.
func (l *pipeListener) client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{DialContext: l.dial, MaxIdleConnsPerHost: 64, ForceAttemptHTTP2: false},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-process" }
