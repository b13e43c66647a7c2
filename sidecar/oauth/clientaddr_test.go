package oauth

import (
	"net/http/httptest"
	"testing"
)

// TestClientAddrs: X-Forwarded-For is read only from a trusted proxy, and
// then from the right: the first address that is not a trusted proxy is
// the client, whatever a client wrote to the left of it.
func TestClientAddrs(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8", "::1")
	if err != nil {
		t.Fatal(err)
	}
	warned := 0
	c := newClientAddrs(trusted, func() { warned++ })
	none := newClientAddrs(nil, nil)
	for _, tc := range []struct {
		name, peer, xff string
		c               *clientAddrs
		want            string
	}{
		{"no proxy configured", "10.0.0.9:5000", "198.51.100.7", none, "10.0.0.9"},
		{"untrusted peer, forged header", "203.0.113.5:5000", "198.51.100.7", c, "203.0.113.5"},
		{"trusted peer", "10.0.0.9:5000", "198.51.100.7", c, "198.51.100.7"},
		{"trusted peer, IPv6", "[::1]:5000", "2001:db8::7", c, "2001:db8::/64"},
		{"IPv6 peer, its /64", "[2001:db8:1:2:3:4:5:6]:5000", "", none, "2001:db8:1:2::/64"},
		{"IPv6 peer with a zone", "[fe80::1%eth0]:5000", "", none, "fe80::/64"},
		{"IPv4-mapped peer", "[::ffff:192.0.2.1]:5000", "", none, "192.0.2.1"},
		{"IPv6 forwarded, its /64", "10.0.0.9:5000", "2001:db8:1:2:ffff::1", c, "2001:db8:1:2::/64"},
		{"client-written entries on the left", "10.0.0.9:5000", "1.1.1.1, 2.2.2.2, 198.51.100.7", c, "198.51.100.7"},
		{"a chain of trusted proxies", "10.0.0.9:5000", "198.51.100.7, 10.1.2.3", c, "198.51.100.7"},
		{"trusted peer, no header", "10.0.0.9:5000", "", c, "10.0.0.9"},
		{"trusted peer, garbage", "10.0.0.9:5000", "not an address", c, "10.0.0.9"},
		{"trusted peer, only proxies", "10.0.0.9:5000", "10.2.3.4", c, "10.0.0.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/oauth/signin", nil)
			r.RemoteAddr = tc.peer
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := tc.c.of(r); got != tc.want {
				t.Errorf("client address %q, want %q", got, tc.want)
			}
		})
	}
	if warned != 1 {
		t.Errorf("warned %d times about a header from an untrusted peer, want once", warned)
	}
	if _, err := ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad range was accepted")
	}
}
