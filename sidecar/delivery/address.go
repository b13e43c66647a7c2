package delivery

import (
	"fmt"
	"net/netip"
	"strings"
	"syscall"

	"code.dny.dev/ssrf"
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

// guardian decides which addresses are globally reachable, from IANA's
// IPv4 and IPv6 special-purpose address registries as code.dny.dev/ssrf
// generates them (see docs/delivery.md#address-filter): any port, any
// network; only the address matters here.
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// Classify returns "" when ip is a globally reachable unicast address a
// webhook may be sent to, else the reason it is refused: "loopback",
// "private", "link-local", "unspecified", "multicast", or "special-purpose
// (…)" naming the registry entry. The decision is the registries'; the
// words are only for the message.
func Classify(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	named := describe(ip.Unmap())
	if err := guardian.SafeAddr(ip); err != nil {
		if named != "" {
			return named
		}
		var why string
		if _, after, ok := strings.Cut(err.Error(), "(denied by: "); ok {
			why = "special-purpose (" + strings.TrimSuffix(after, ")") + ")"
		} else {
			why = "special-purpose (outside the IPv6 global unicast range 2000::/3)"
		}
		return why
	}
	if named != "" {
		return named
	}
	return ""
}

// describe names the common kinds of non-public address, or returns "".
func describe(ip netip.Addr) string {
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
