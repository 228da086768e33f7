package send

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/paykit/paykit/internal/webhooks"
)

// DefaultTimeout is the time limit of one delivery attempt: connecting,
// sending the request and reading the (limited) response.
const DefaultTimeout = 15 * time.Second

// ErrNotPublic is wrapped by the dial error when the client from NewClient
// refuses to connect to an address.
var ErrNotPublic = errors.New("address is not public")

// ClientOptions configures NewClientWith.
type ClientOptions struct {
	// Live selects the connect-time address rule: see NewClientWith.
	Live bool
	// Timeout limits each attempt (each Do, including reading the body);
	// zero means DefaultTimeout.
	Timeout time.Duration
}

// NewClient returns NewClientWith(ClientOptions{Live: live}).
func NewClient(live bool) *http.Client {
	return NewClientWith(ClientOptions{Live: live})
}

// NewClientWith returns an HTTP client for delivering webhooks to URLs that
// merchants chose. It is safe for concurrent use and should be shared (it
// keeps connections alive). It:
//
//   - limits each request, including reading the response, to opts.Timeout
//     (DefaultTimeout when zero);
//   - never follows redirects: a 3xx is returned as it is, and Deliver counts
//     it as a failed attempt;
//   - ignores proxy settings from the environment (HTTP_PROXY and the like);
//   - checks, at connect time, the IP address each connection actually goes
//     to, after DNS resolution, so that a name that resolved to a public
//     address at registration and now resolves elsewhere (DNS rebinding) is
//     still refused. In live only public addresses (webhooks.PublicAddr) are allowed.
//     In test, loopback addresses (127.0.0.0/8, ::1) are allowed as well, for
//     endpoints on the developer's machine, but every other non-public
//     address (private networks, link-local and cloud metadata, CGNAT, …) is
//     refused just as in live. A refused connection fails with an error
//     wrapping ErrNotPublic, before any packet is sent to the address.
//
// Deliver limits how much of a response body is read (MaxResponseRead).
func NewClientWith(opts ClientOptions) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	live := opts.Live
	dialer := &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			return checkDial(live, network, address)
		},
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// checkDial is the connect-time address check; address is the "ip:port" the
// socket is about to connect to.
func checkDial(live bool, network, address string) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("webhooks: refusing %s connection to %s: only TCP is allowed", network, address)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhooks: refusing connection to %q: %w", address, err)
	}
	ip := ap.Addr().WithZone("").Unmap()
	if webhooks.PublicAddr(ip) || !live && ip.IsLoopback() {
		return nil
	}
	mode := "live"
	if !live {
		mode = "test"
	}
	return fmt.Errorf("webhooks: refusing to connect to %s in %s: %w", address, mode, ErrNotPublic)
}
