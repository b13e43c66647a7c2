package delivery

import (
	"fmt"
	"net/netip"
	"syscall"
)

// AddressError reports a webhook target refused because it resolved to an
// address that is not public. An attempt that meets it is dropped.
type AddressError struct {
	IP     netip.Addr
	Reason string // e.g. "loopback", "private"
}

// Error says which address was refused and why.
func (e *AddressError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s address (webhook targets must be public; see AllowPrivateTargets)", e.IP, e.Reason)
}

// nonPublic lists ranges that are not reachable public unicast addresses,
// beyond what netip's predicates cover (RFC 6890 special-purpose registries).
var nonPublic = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignment"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// embeddedIPv4 lists IPv6 ranges that carry an IPv4 address a router may
// forward to (NAT64, 6to4): the embedded address is checked too.
var embeddedIPv4 = []struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// Classify returns "" when ip is a public unicast address a webhook may be
// sent to, else the reason it is refused ("loopback", "private",
// "link-local", "unspecified", "multicast", "carrier-grade NAT", …).
func Classify(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	for _, r := range embeddedIPv4 {
		if r.prefix.Contains(ip) {
			b := ip.As16()
			inner := netip.AddrFrom4([4]byte(b[r.offset : r.offset+4]))
			if reason := Classify(inner); reason != "" {
				return reason + " (embedded in " + r.prefix.String() + ")"
			}
		}
	}
	return ""
}

// refusePrivate is a net.Dialer Control function: it runs after DNS
// resolution with the address about to be connected, so a name that
// resolves (or re-resolves) to a private address cannot be reached.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: not an IP address and port", address)
	}
	if reason := Classify(ap.Addr()); reason != "" {
		return &AddressError{IP: ap.Addr(), Reason: reason}
	}
	return nil
}
