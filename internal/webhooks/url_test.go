package webhooks

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// fakeResolver answers from a map; unknown names fail as NXDOMAIN would.
type fakeResolver struct {
	hosts map[string][]string
	asked []string
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.asked = append(r.asked, host)
	ips, ok := r.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func TestValidateURL(t *testing.T) {
	res := &fakeResolver{hosts: map[string][]string{
		"hooks.acme.com":      {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"rebind.acme.com":     {"10.0.0.1"},
		"mixed.acme.com":      {"93.184.215.14", "10.0.0.1"},
		"meta.acme.com":       {"169.254.169.254"},
		"mapped.acme.com":     {"::ffff:127.0.0.1"},
		"empty.acme.com":      {},
		"xn--bcher-kva.com":   {"93.184.215.14"},
		"hooks.acme.com.":     {"10.0.0.1"}, // must not be asked: the trailing dot is trimmed
		"trailing.acme.com":   {"93.184.215.14"},
		"under_score.acme.io": {"93.184.215.14"},
	}}
	long := "https://hooks.acme.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.acme.com/"))
	cases := []struct {
		name string
		url  string
		live bool
		ok   bool
		msg  string // part of the error
	}{
		// Test environment.
		{"test loopback http", "http://127.0.0.1:8080/hook", false, true, ""},
		{"test localhost", "http://localhost:3000/webhooks?x=1", false, true, ""},
		{"test ipv6 loopback", "http://[::1]:8080/", false, true, ""},
		{"test https name", "https://hooks.acme.com/paykit", false, true, ""},
		{"test private accepted at registration", "http://10.0.0.1/", false, true, ""},
		{"test userinfo", "http://user:pass@127.0.0.1:8080/hook", false, false, "credentials"},
		{"test empty userinfo", "http://@127.0.0.1/", false, false, "credentials"},
		{"test fragment", "http://127.0.0.1/hook#x", false, false, "fragment"},
		{"test empty fragment", "http://127.0.0.1/hook#", false, false, "fragment"},
		{"test ftp", "ftp://hooks.acme.com/", false, false, "scheme"},
		{"test relative", "/hook", false, false, "scheme"},
		{"test no host", "http:///hook", false, false, "host"},
		{"test opaque", "http:hooks.acme.com", false, false, "host"},
		{"test port zero", "http://127.0.0.1:0/", false, false, "port"},
		{"test port too big", "http://127.0.0.1:65536/", false, false, "port"},
		{"test empty port", "http://127.0.0.1:/", false, false, "port"},
		{"test space", "http://127.0.0.1/a b", false, false, "ASCII"},
		{"test newline", "http://127.0.0.1/a\nb", false, false, "ASCII"},
		{"test unicode", "https://bücher.com/", false, false, "ASCII"},
		{"test empty", "", false, false, "empty"},
		{"test max length", long, false, true, ""},
		{"test too long", long + "a", false, false, "longer"},

		// Live environment.
		{"live https public", "https://hooks.acme.com/paykit?src=1", true, true, ""},
		{"live https port", "https://hooks.acme.com:8443/paykit", true, true, ""},
		{"live upper-case scheme", "HTTPS://hooks.acme.com/", true, true, ""},
		{"live trailing dot", "https://trailing.acme.com./", true, true, ""},
		{"live punycode", "https://xn--bcher-kva.com/", true, true, ""},
		{"live underscore", "https://under_score.acme.io/", true, true, ""},
		{"live max length", long, true, true, ""},
		{"live http", "http://hooks.acme.com/paykit", true, false, "https"},
		{"live ipv4 loopback literal", "https://127.0.0.1/hook", true, false, "IP address"},
		{"live public ip literal", "https://93.184.215.14/hook", true, false, "IP address"},
		{"live ipv6 literal", "https://[::1]/hook", true, false, "IP address"},
		{"live ipv6 zone literal", "https://[fe80::1%25eth0]/hook", true, false, "IP address"},
		{"live numeric host", "https://2130706433/", true, false, "domain name"},
		{"live hex host", "https://0x7f.1/", true, false, "domain name"},
		{"live numeric tld", "https://10.0.0.1.2/", true, false, "domain name"},
		{"live single label", "https://intranet/hook", true, false, "fully qualified"},
		{"live localhost", "https://localhost/hook", true, false, "fully qualified"},
		{"live sub.localhost", "https://api.localhost/hook", true, false, "special-use"},
		{"live .internal", "https://metadata.google.internal/", true, false, "special-use"},
		{"live .local", "https://printer.local/", true, false, "special-use"},
		{"live resolves to 10.0.0.1", "https://rebind.acme.com/hook", true, false, "10.0.0.1"},
		{"live resolves to public and private", "https://mixed.acme.com/hook", true, false, "not a public address"},
		{"live resolves to metadata", "https://meta.acme.com/", true, false, "not a public address"},
		{"live resolves to mapped loopback", "https://mapped.acme.com/", true, false, "not a public address"},
		{"live no addresses", "https://empty.acme.com/", true, false, "does not resolve"},
		{"live nxdomain", "https://nowhere.acme.com/", true, false, "does not resolve"},
		{"live userinfo", "https://u:p@hooks.acme.com/", true, false, "credentials"},
		{"live fragment", "https://hooks.acme.com/#frag", true, false, "fragment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			err := ValidateURLContext(context.Background(), c.url, c.live, res)
			if c.ok {
				is.NoErr(err)
				return
			}
			is.True(err != nil)
			is.True(errors.Is(err, ErrInvalidURL))
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not mention %q", err, c.msg)
			}
		})
	}
	for _, h := range res.asked {
		if strings.HasSuffix(h, ".") {
			t.Errorf("resolver asked for %q with the trailing dot", h)
		}
	}
}

// ValidateURL with the default resolver refuses IP literals and http in live
// without any DNS lookup.
func TestValidateURLDefaultResolver(t *testing.T) {
	is := is.New(t)
	is.True(errors.Is(ValidateURL("https://127.0.0.1/hook", true), ErrInvalidURL))
	is.True(errors.Is(ValidateURL("http://hooks.acme.com/hook", true), ErrInvalidURL))
	is.True(errors.Is(ValidateURL("https://user@hooks.acme.com/hook", true), ErrInvalidURL))
	is.NoErr(ValidateURL("http://127.0.0.1:8080/hook", false))
}
