package oauth

import (
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/realclientip/realclientip-go"
)

// ParseTrustedProxies parses addresses and CIDR ranges ("10.0.0.0/8",
// "192.0.2.7", "::1") into the ranges Config.TrustedProxies takes. It
// returns an error naming the first value that is neither.
func ParseTrustedProxies(values ...string) ([]net.IPNet, error) {
	return realclientip.AddressesAndRangesToIPNets(values...)
}

// clientAddrs finds the address a sign-in comes from (docs/oauth.md#throttling):
// the TCP peer's, unless the peer is one of the trusted proxies; then the
// rightmost address of X-Forwarded-For that is not itself a trusted proxy
// (what the nearest untrusted hop connected from: everything left of it
// was written by the client and may be forged). A header that is missing
// or unreadable leaves the peer's address. Without trusted proxies the
// header is never read.
//
// An IPv6 client is its /64 ("2001:db8:1:2::/64"): a provider gives a
// household or a host a whole /64, whose addresses it can change at will,
// so counting each address alone would give one client 2^64 of them. An
// IPv4-mapped IPv6 address is its IPv4 address.
type clientAddrs struct {
	trusted []net.IPNet
	xff     realclientip.Strategy
	warn    sync.Once
	logWarn func()
}

func newClientAddrs(trusted []net.IPNet, warn func()) *clientAddrs {
	c := &clientAddrs{trusted: trusted, logWarn: warn}
	if len(trusted) > 0 {
		c.xff = realclientip.Must(realclientip.NewRightmostTrustedRangeStrategy("X-Forwarded-For", trusted))
	}
	return c
}

// of returns the client address of r: an IPv4 address, or an IPv6 /64.
func (c *clientAddrs) of(r *http.Request) string {
	return network(c.address(r))
}

func (c *clientAddrs) address(r *http.Request) string {
	peer := realclientip.RemoteAddrStrategy{}.ClientIP(nil, r.RemoteAddr)
	if peer == "" {
		return r.RemoteAddr
	}
	if c.xff == nil || !c.isTrusted(peer) {
		if r.Header.Get("X-Forwarded-For") != "" && c.logWarn != nil {
			c.warn.Do(c.logWarn)
		}
		return peer
	}
	if ip := c.xff.ClientIP(r.Header, r.RemoteAddr); ip != "" {
		return ip
	}
	return peer
}

// network is the client an address stands for: an IPv4 address as it is
// (unmapped from IPv6), an IPv6 address as its /64, without zone.
// Anything else is returned unchanged.
func network(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

func (c *clientAddrs) isTrusted(addr string) bool {
	ip, err := realclientip.ParseIPAddr(addr)
	if err != nil {
		return false
	}
	for _, n := range c.trusted {
		if n.Contains(ip.IP) {
			return true
		}
	}
	return false
}
