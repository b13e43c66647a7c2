package serve

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guidepub/guidepub/site"
)

// Defaults of the printed Varnish configuration.
const (
	// DefaultVarnishTTL is how long Varnish keeps a file of a public id
	// when ConfigOptions.EdgeTTL is zero: a day, since purges by surrogate
	// key take every change out at once.
	DefaultVarnishTTL = 24 * time.Hour
	// VarnishNotFoundTTL is how long Varnish keeps the 404 of a missing
	// file of a public id: long enough to absorb a burst of requests for
	// it, short enough that a view published without a purge shows up
	// within a minute. A purge of the id's key evicts it sooner.
	VarnishNotFoundTTL = 60 * time.Second
)

// DefaultPurgeACL are the addresses Varnish accepts purges from when
// ConfigOptions.PurgeACL is empty: this machine only.
var DefaultPurgeACL = []string{"localhost", "127.0.0.1", "::1"}

// keyRule is one line of the nginx and Caddy maps from a request path to
// its surrogate key: a regular expression (PCRE and RE2 alike), whose
// first group is the public id when Key, and which gives no key otherwise.
// The first rule that matches decides; a path no rule matches has no key.
type keyRule struct {
	Pattern string
	Key     bool
}

// keyRules returns the rules that give a request path (with or without
// its query) the key site.SurrogateKeyOf gives it: the id of /<id>...,
// /u/<id>... and /embed/<id>..., unless it is reserved, and no key for
// the folder of the shared files.
func keyRules() []keyRule {
	id := strings.TrimSuffix(strings.TrimPrefix(site.ValidID.String(), "^"), "$")
	reserved := make([]string, 0, len(site.Reserved))
	for r := range site.Reserved {
		reserved = append(reserved, regexp.QuoteMeta(r))
	}
	slices.Sort(reserved)
	res := "(?:" + strings.Join(reserved, "|") + ")"
	pages := "(?:" + regexp.QuoteMeta(site.UnbrandedDir) + "|" + regexp.QuoteMeta(site.EmbedDir) + ")/"
	end := `(?:[./?]|$)` // PublicIDOf ends an id at "/" or "."
	return []keyRule{
		{"^/" + pages + res + end, false},
		{"^/" + pages + "(" + id + ")" + end, true},
		{"^/" + res + end, false},
		{"^/" + regexp.QuoteMeta(site.AssetsDir) + `(?:[/?]|$)`, false},
		{"^/(" + id + ")" + end, true},
	}
}

// edgeData is what the templates need for surrogate keys and the edge
// TTL; it is part of configData.
type edgeData struct {
	KeyHeaders []string // site.SurrogateKeyHeaders
	KeyPrefix  string   // site.SurrogateKeyPrefix
	KeyRules   []keyRule
	// EdgeMaxAge is site.EdgeMaxAge of a file of a public id ("" without
	// an edge TTL); DocumentEdgeCacheControl and MediaEdgeCacheControl are
	// the Cache-Control values of such files (site.EdgeCacheControl).
	EdgeMaxAge                                      string
	DocumentEdgeCacheControl, MediaEdgeCacheControl string
}

// newEdgeData gathers edgeData for the edge TTL ttl.
func newEdgeData(ttl time.Duration) edgeData {
	doc, media := "id/"+site.Documents[0], "id/"+site.MediaDir+"/f.jpg"
	return edgeData{
		KeyHeaders:               site.SurrogateKeyHeaders,
		KeyPrefix:                site.SurrogateKeyPrefix,
		KeyRules:                 keyRules(),
		EdgeMaxAge:               site.EdgeMaxAge(doc, ttl),
		DocumentEdgeCacheControl: site.EdgeCacheControl(doc, ttl),
		MediaEdgeCacheControl:    site.EdgeCacheControl(media, ttl),
	}
}

// varnishData is what varnish.vcl.tmpl needs beyond configData.
type varnishData struct {
	BackendHost, BackendPort string
	SidecarHost, SidecarPort string // empty: no sidecar backend
	TTL, NotFoundTTL         string // VCL durations
	PurgeACL                 []string
	Encodings                []string // the tokens serve negotiates, best first, identity last
	PassPattern              string   // the paths never cached: site.SidecarRoutes
}

// newVarnishData checks the options of a Varnish configuration and
// gathers varnishData.
func newVarnishData(o ConfigOptions) (varnishData, error) {
	var d varnishData
	var err error
	if d.BackendHost, d.BackendPort, err = hostPort(o.Listen, "--addr"); err != nil {
		return d, err
	}
	if o.Sidecar != "" {
		if d.SidecarHost, d.SidecarPort, err = hostPort(o.Sidecar, "--sidecar"); err != nil {
			return d, err
		}
	}
	ttl := o.EdgeTTL
	if ttl <= 0 {
		ttl = DefaultVarnishTTL
	}
	d.TTL = vclDuration(ttl)
	d.NotFoundTTL = vclDuration(min(VarnishNotFoundTTL, ttl))
	acl := o.PurgeACL
	if len(acl) == 0 {
		acl = DefaultPurgeACL
	}
	for _, a := range acl {
		e, err := vclACLEntry(a)
		if err != nil {
			return d, err
		}
		d.PurgeACL = append(d.PurgeACL, e)
	}
	for _, e := range site.Encodings {
		d.Encodings = append(d.Encodings, e.Name)
	}
	d.Encodings = append(d.Encodings, site.Identity.Name)
	routes := make([]string, len(site.SidecarRoutes))
	for i, r := range site.SidecarRoutes {
		routes[i] = regexp.QuoteMeta(r)
		if !strings.HasSuffix(r, "/") {
			routes[i] += `(?:\?|$)`
		}
	}
	d.PassPattern = "^(?:" + strings.Join(routes, "|") + ")"
	return d, nil
}

// hostPort splits a host:port for a VCL backend; a bare port or ":port"
// is on 127.0.0.1.
func hostPort(addr, flag string) (string, string, error) {
	if _, err := strconv.Atoi(addr); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("serve: %s %q: %w", flag, addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return host, port, nil
}

// vclDuration writes d in whole seconds, as VCL reads a duration.
func vclDuration(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// vclACLEntry returns the entry of a VCL acl for an address ("::1"), a
// CIDR range ("10.0.0.0/8") or "localhost": quoted, the prefix length
// outside the quotes. It returns an error for anything else.
func vclACLEntry(a string) (string, error) {
	a = strings.TrimSpace(a)
	if a == "localhost" {
		return `"localhost"`, nil
	}
	if p, err := netip.ParsePrefix(a); err == nil {
		return fmt.Sprintf("%q/%d", p.Addr().String(), p.Bits()), nil
	}
	if ip, err := netip.ParseAddr(a); err == nil {
		return strconv.Quote(ip.String()), nil
	}
	return "", fmt.Errorf("serve: purge ACL entry %q is neither an address nor a CIDR range", a)
}

// encodingPattern is a regular expression (PCRE, as Varnish reads it)
// matching an Accept-Encoding value that accepts the coding token with a
// non-zero q-value ("x-gzip" counting as gzip): the token, then optional
// parameters other than q=0.
func encodingPattern(token string) string {
	t := regexp.QuoteMeta(token)
	if token == site.Gzip.Name {
		t = "(?:x-)?" + t
	}
	return `(?i)(?:^|,)\s*` + t + `\s*(?:,|$|;(?!\s*q\s*=\s*0(?:\.0*)?\s*(?:,|$)))`
}
