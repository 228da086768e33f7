package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxURLLength is the longest endpoint URL accepted, in bytes.
const MaxURLLength = 2048

// ErrInvalidURL is wrapped by every error ValidateURL returns; the rest of the
// message says what is wrong and may be shown to the merchant.
var ErrInvalidURL = errors.New("invalid webhook endpoint URL")

// Resolver looks up the addresses of a host name. *net.Resolver implements
// it; tests inject their own.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// lookupTimeout bounds the name resolution ValidateURL does.
const lookupTimeout = 5 * time.Second

// ValidateURL checks an endpoint URL when a merchant registers it, resolving
// host names with net.DefaultResolver for at most 5 seconds. See
// ValidateURLContext for the rules.
func ValidateURL(raw string, live bool) error {
	return ValidateURLContext(context.Background(), raw, live, nil)
}

// ValidateURLContext checks an endpoint URL when a merchant registers it; r
// resolves host names (nil means net.DefaultResolver), and the lookup is
// limited to 5 seconds within ctx. Every error wraps ErrInvalidURL.
//
// In both environments the URL must be at most MaxURLLength bytes of visible
// ASCII (punycode host names, percent-encoded paths), absolute with scheme
// http or https and a host, without userinfo (user:password@) and without a
// fragment, and a port, if given, must be 1–65535.
//
// In test any such URL is accepted, including loopback hosts for local
// development (which host is finally reached is checked again at connect time
// by the client from NewClient).
//
// In live the scheme must be https and the host must be a domain name of at
// least two labels whose last label is not numeric: IP literals (of any
// address), single-label names (resolved through search domains to internal
// hosts), numeric forms such as 0x7f.1, and special-use names (localhost,
// *.localhost, *.local, *.internal, *.home.arpa, *.test, *.invalid) are
// refused. The name must then resolve, and only to public addresses (see
// PublicAddr). Since DNS answers can change, the client from NewClient checks
// the address it actually connects to as well.
func ValidateURLContext(ctx context.Context, raw string, live bool, r Resolver) error {
	u, err := parseEndpoint(raw)
	if err != nil {
		return err
	}
	if !live {
		return nil
	}
	if u.Scheme != "https" {
		return invalid("live endpoints must use https")
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil || strings.HasPrefix(u.Host, "[") {
		return invalid("live endpoints must use a domain name, not an IP address")
	}
	if err := checkLiveHostName(host); err != nil {
		return err
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupIPAddr(ctx, strings.TrimSuffix(host, "."))
	if err != nil || len(addrs) == 0 {
		return invalid(fmt.Sprintf("host %q does not resolve", host))
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || !PublicAddr(ip) {
			return invalid(fmt.Sprintf("host %q resolves to %s, which is not a public address", host, a.IP))
		}
	}
	return nil
}

func invalid(msg string) error { return fmt.Errorf("%w: %s", ErrInvalidURL, msg) }

// parseEndpoint applies the rules shared by both environments.
func parseEndpoint(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, invalid("empty")
	}
	if len(raw) > MaxURLLength {
		return nil, invalid(fmt.Sprintf("longer than %d bytes", MaxURLLength))
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c >= 0x7f {
			return nil, invalid("only visible ASCII characters are allowed (use punycode and percent-encoding)")
		}
	}
	if strings.Contains(raw, "#") {
		return nil, invalid("a fragment (#…) is not allowed")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalid("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, invalid("the scheme must be http or https")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, invalid("an absolute URL with a host is required")
	}
	if u.User != nil {
		return nil, invalid("credentials (user:password@) are not allowed in the URL")
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, invalid("the port must be between 1 and 65535")
		}
	}
	return u, nil
}

// specialSuffixes are name suffixes that never designate a public host.
var specialSuffixes = []string{".localhost", ".local", ".internal", ".home.arpa", ".test", ".invalid"}

// checkLiveHostName checks the syntax of a live host name (not an IP literal).
func checkLiveHostName(host string) error {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if len(name) > 253 {
		return invalid("the host name is too long")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return invalid(fmt.Sprintf("host %q is not a valid domain name", host))
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return invalid(fmt.Sprintf("host %q is not a valid domain name", host))
			}
		}
	}
	if len(labels) < 2 {
		return invalid(fmt.Sprintf("host %q must be a fully qualified domain name", host))
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" || strings.HasPrefix(labels[len(labels)-1], "0x") {
		return invalid(fmt.Sprintf("host %q is not a valid domain name", host))
	}
	if name == "localhost" {
		return invalid("localhost is not allowed in live")
	}
	for _, s := range specialSuffixes {
		if strings.HasSuffix(name, s) {
			return invalid(fmt.Sprintf("host %q is a special-use or internal name", host))
		}
	}
	return nil
}
