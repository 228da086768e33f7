package webhooks

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	cases := []struct {
		addr   string
		public bool
	}{
		// Public.
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.215.14", true},
		{"100.63.255.255", true}, // just below CGNAT
		{"100.128.0.0", true},    // just above CGNAT
		{"172.15.255.255", true}, // just below 172.16/12
		{"172.32.0.0", true},     // just above
		{"198.17.255.255", true},
		{"198.20.0.0", true},
		{"223.255.255.255", true},
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:82a::200e", true},
		{"::ffff:8.8.8.8", true},   // IPv4-mapped public
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8

		// Not public, IPv4.
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"10.255.255.255", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.169.254", false}, // cloud metadata
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},

		// Not public, IPv6.
		{"::", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::127.0.0.1", false},        // deprecated IPv4-compatible
		{"64:ff9b::7f00:1", false},    // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", false},     // NAT64 of 10.0.0.1
		{"64:ff9b:1::808:808", false}, // local-use NAT64 prefix
		{"100::1", false},             // discard
		{"2001::1", false},            // Teredo
		{"2001:db8::1", false},        // documentation
		{"2002:7f00:1::1", false},     // 6to4
		{"3fff::1", false},            // documentation (RFC 9637)
		{"fc00::1", false},            // ULA
		{"fd12:3456:789a::1", false},  // ULA
		{"fe80::1", false},            // link-local
		{"fe80::1%eth0", false},       // with zone
		{"fec0::1", false},            // site-local
		{"ff02::1", false},            // multicast
		{"fd00:ec2::254", false},      // AWS metadata over IPv6
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.addr)
		if got := PublicAddr(ip); got != c.public {
			t.Errorf("PublicAddr(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
	if PublicAddr(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}
