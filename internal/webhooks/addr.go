package webhooks

import "net/netip"

// nonPublic4 lists the IPv4 ranges that are not publicly routable unicast
// (IANA special-purpose registry, plus multicast and the reserved 240/4).
var nonPublic4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network", includes unspecified
	netip.MustParsePrefix("10.0.0.0/8"),      // private (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, CGNAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata endpoints
	netip.MustParsePrefix("172.16.0.0/12"),   // private (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
	netip.MustParsePrefix("192.168.0.0/16"),  // private (RFC 1918)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes broadcast 255.255.255.255
}

var (
	// global6 is the only IPv6 block allocated for global unicast; everything
	// outside it (loopback, unspecified, IPv4-compatible, discard 100::/64,
	// local-use NAT64 64:ff9b:1::/48, ULA fc00::/7, link-local fe80::/10,
	// site-local fec0::/10, multicast ff00::/8, …) is not public.
	global6 = netip.MustParsePrefix("2000::/3")
	// nat64 is the well-known NAT64 prefix: the address is as public as the
	// IPv4 address in its last 32 bits.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// nonPublic6 lists blocks inside 2000::/3 that are not public.
	nonPublic6 = []netip.Prefix{
		netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments: Teredo, benchmarking, ORCHID, …
		netip.MustParsePrefix("2001:db8::/32"), // documentation
		netip.MustParsePrefix("2002::/16"),     // 6to4, deprecated; embeds an IPv4 address
		netip.MustParsePrefix("3fff::/20"),     // documentation (RFC 9637)
		netip.MustParsePrefix("5f00::/16"),     // SRv6 SIDs (RFC 9602)
	}
)

// PublicAddr reports whether ip is a publicly routable unicast address that a
// live webhook may be sent to. It is false for invalid addresses, loopback,
// unspecified, private (RFC 1918, fc00::/7), CGNAT 100.64.0.0/10, link-local
// (including 169.254.169.254 cloud metadata), multicast, broadcast and other
// reserved IPv4 ranges (0.0.0.0/8, 192.0.0.0/24, 198.18.0.0/15, 240.0.0.0/4),
// documentation ranges, every IPv6 address outside 2000::/3, the 2001::/23
// protocol block (Teredo and others), 6to4 2002::/16 and 5f00::/16. An
// IPv4-mapped IPv6 address (::ffff:a.b.c.d) and an address in the well-known
// NAT64 prefix 64:ff9b::/96 are judged by the IPv4 address they carry. A zone
// is ignored. The check errs on the side of refusing: a few rarely used
// globally reachable special-purpose addresses (inside 2001::/23) are refused
// too.
func PublicAddr(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		for _, p := range nonPublic4 {
			if p.Contains(ip) {
				return false
			}
		}
		return true
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		return PublicAddr(netip.AddrFrom4([4]byte(b[12:16])))
	}
	if !global6.Contains(ip) {
		return false
	}
	for _, p := range nonPublic6 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
