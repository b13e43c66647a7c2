package serve

import (
	"embed"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// ConfigOptions are the deployment facts a printed configuration needs.
type ConfigOptions struct {
	Dir     string // absolute path of the exported public tree
	Listen  string // host:port (or :port) the web server listens on; for "varnish", the address of guidepub serve
	Sidecar string // host:port of the sidecar for site.SidecarRoutes; empty: no proxy routes
	// EdgeTTL is Config.EdgeTTL of the server the configuration stands
	// for: nginx and Caddy send the same edge headers; Varnish keeps
	// files this long (DefaultVarnishTTL when zero).
	EdgeTTL time.Duration
	// PurgeACL lists the addresses and CIDR ranges Varnish accepts purges
	// from (DefaultPurgeACL when empty); the other kinds ignore it.
	PurgeACL []string
}

// ConfigKinds lists the kinds WriteConfig accepts.
var ConfigKinds = []string{"nginx", "caddy", "varnish", "headers", "404"}

// WriteConfig writes the serving rules of Server for another web server:
// "nginx" (a server block, and the map of surrogate keys, for the http
// context), "caddy" (a Caddyfile site block), "varnish" (a VCL 4.1 file
// for Varnish in front of guidepub serve at opts.Listen), "headers" (a
// _headers file for Netlify or Cloudflare Pages) or "404" (the HTML 404
// page, for hosts that serve a 404.html). All but the last are the
// templates nginx.conf.tmpl, Caddyfile.tmpl, varnish.vcl.tmpl and
// headers.tmpl of this folder. It returns an error for an unknown kind,
// invalid options, or a failed write.
func WriteConfig(w io.Writer, kind string, opts ConfigOptions) error {
	if kind != "headers" && kind != "404" {
		if (opts.Dir == "" && kind != "varnish") || opts.Listen == "" {
			return fmt.Errorf("serve: a %s configuration needs the tree's folder and a listen address", kind)
		}
		for _, v := range append([]string{opts.Dir, opts.Listen, opts.Sidecar}, opts.PurgeACL...) {
			if strings.ContainsAny(v, "\"'`;{}\n\r\\$ \t") {
				return fmt.Errorf("serve: %q cannot be written safely into a %s configuration", v, kind)
			}
		}
	}
	if opts.EdgeTTL < 0 {
		return fmt.Errorf("serve: negative edge TTL %s", opts.EdgeTTL)
	}
	switch kind {
	case "nginx", "caddy", "headers", "varnish":
		d := newConfigData(opts)
		if kind == "varnish" {
			v, err := newVarnishData(opts)
			if err != nil {
				return err
			}
			d.Varnish = &v
		}
		return configTemplates.ExecuteTemplate(w, configTemplateNames[kind], d)
	case "404":
		_, err := w.Write(viewpage.NotFound)
		return err
	default:
		return fmt.Errorf("serve: unknown configuration kind %q (want one of %s)", kind, strings.Join(ConfigKinds, ", "))
	}
}

// documentPattern is a regular expression (RE2 and PCRE alike) matching the
// URL path of a document: /<id>/data/status and so on.
func documentPattern() string {
	alts := make([]string, len(site.Documents))
	for i, d := range site.Documents {
		alts[i] = regexp.QuoteMeta(d)
	}
	return `^/[^/]+/(` + strings.Join(alts, "|") + `)`
}

// pageIDPattern matches the part of a page URL after "/", "/u/" or
// "/embed/": an id, and a language for a page in another language than the
// default (docs/pages.md#languages).
func pageIDPattern() string {
	return `[A-Za-z0-9_-]+(?:/(?:` + strings.Join(site.Languages, "|") + `))?`
}

// slashPagePattern matches a page URL with a trailing slash; the first
// group is the URL without it.
func slashPagePattern() string {
	return `^(/(?:` + site.UnbrandedDir + `/|` + site.EmbedDir + `/)?` + pageIDPattern() + `)/$`
}

// nginxString quotes s for an nginx configuration: a single-quoted
// string, with nginx's escapes for the quote, the backslash and newlines.
// It panics on "$", which nginx would read as a variable; the pages never
// contain one (TestWriteConfig).
func nginxString(s string) string {
	if strings.Contains(s, "$") {
		panic("serve: nginx string with a $")
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(s) + "'"
}

// siblingPattern matches the compressed siblings of documents.
func siblingPattern() string {
	exts := make([]string, len(site.Encodings))
	for i, e := range site.Encodings {
		exts[i] = regexp.QuoteMeta(e.Ext)
	}
	return documentPattern() + `(` + strings.Join(exts, "|") + `)$`
}

// sortedMediaTypes returns the media extensions (without dot) grouped by
// Content-Type, in a stable order.
func sortedMediaTypes() (types []string, exts map[string][]string) {
	exts = map[string][]string{}
	for ext, typ := range site.MediaTypes() {
		if _, ok := exts[typ]; !ok {
			types = append(types, typ)
		}
		exts[typ] = append(exts[typ], strings.TrimPrefix(ext, "."))
	}
	slices.Sort(types)
	for _, t := range types {
		slices.Sort(exts[t])
	}
	return types, exts
}

// configTemplateFiles holds the text WriteConfig prints for each kind but
// "404", as templates of a configData.
//
//go:embed nginx.conf.tmpl Caddyfile.tmpl varnish.vcl.tmpl headers.tmpl
var configTemplateFiles embed.FS

// configTemplateNames names the file of configTemplateFiles of each kind.
var configTemplateNames = map[string]string{"nginx": "nginx.conf.tmpl", "caddy": "Caddyfile.tmpl", "varnish": "varnish.vcl.tmpl", "headers": "headers.tmpl"}

// configTemplates are configTemplateFiles parsed, with the quoting
// functions they call; a template that does not parse panics at start
// (TestConfigGolden renders each).
var configTemplates = template.Must(template.New("").
	Funcs(template.FuncMap{"nginxString": nginxString, "caddyBacktick": caddyBacktick, "encodingPattern": encodingPattern}).
	ParseFS(configTemplateFiles, "*.tmpl"))

// configData is what the templates of configTemplateFiles are rendered with:
// the options, and the serving rules of packages site and viewpage.
type configData struct {
	ConfigOptions
	SidecarRoutes []sidecarRoute

	DocumentPattern, SiblingPattern string // regular expressions of documents and their siblings
	PageIDPattern, SlashPagePattern string // of a page's id (and language), of a page URL with "/"
	MediaDir                        string
	MediaTypes                      []mediaType
	DocumentCacheControl            string // of documents and pages
	MediaCacheControl               string
	AssetsDir, StylesheetPattern    string // the folder of the shared files, a regular expression of the stylesheet's path
	StylesheetType                  string
	ImmutableCacheControl           string // of the stylesheet, whose name is a hash of its bytes
	Precompressed                   string // Caddy's names of the encodings, best first
	PageType, PageFile              string
	Documents                       []string   // site.Documents
	EmbedDir, UnbrandedDir          string     // the folders of the embedded and unbranded pages
	Pages                           []pageRule // nginx's page locations, most specific first
	EmbeddedCSP, UnbrandedCSP       string
	BrandedCSP, NotFoundCSP         string
	NotFoundPage                    string // the HTML 404 page
	Edge                            edgeData
	Varnish                         *varnishData // for "varnish" only
}

// sidecarRoute is one of site.SidecarRoutes: a path, or with Prefix every
// path under it.
type sidecarRoute struct {
	Path   string
	Prefix bool
}

// mediaType is a Content-Type and its extensions, without dots.
type mediaType struct{ Type, Exts string }

// pageRule is a kind of view page: its URL prefix ("/embed", "/u" or ""),
// its Content-Security-Policy and X-Frame-Options ("" for none).
type pageRule struct{ Prefix, CSP, FrameOptions string }

// newConfigData gathers what the templates print for o.
func newConfigData(o ConfigOptions) configData {
	d := configData{
		ConfigOptions:         o,
		DocumentPattern:       documentPattern(),
		SiblingPattern:        siblingPattern(),
		PageIDPattern:         pageIDPattern(),
		SlashPagePattern:      slashPagePattern(),
		MediaDir:              site.MediaDir,
		DocumentCacheControl:  site.DocumentCacheControl,
		MediaCacheControl:     site.MediaCacheControl,
		AssetsDir:             site.AssetsDir,
		StylesheetPattern:     site.StylesheetPattern,
		StylesheetType:        site.StylesheetType,
		ImmutableCacheControl: site.ImmutableCacheControl,
		PageType:              site.PageType,
		PageFile:              site.PageFile,
		Documents:             site.Documents,
		EmbedDir:              site.EmbedDir,
		UnbrandedDir:          site.UnbrandedDir,
		EmbeddedCSP:           viewpage.CSP(viewpage.Embedded, ""),
		UnbrandedCSP:          viewpage.CSP(viewpage.Unbranded, ""),
		BrandedCSP:            viewpage.CSP(viewpage.Branded, ""),
		NotFoundCSP:           viewpage.NotFoundCSP,
		NotFoundPage:          string(viewpage.NotFound),
		Edge:                  newEdgeData(o.EdgeTTL),
	}
	for _, route := range site.SidecarRoutes {
		d.SidecarRoutes = append(d.SidecarRoutes, sidecarRoute{route, strings.HasSuffix(route, "/")})
	}
	types, exts := sortedMediaTypes()
	for _, t := range types {
		d.MediaTypes = append(d.MediaTypes, mediaType{t, strings.Join(exts[t], " ")})
	}
	names := make([]string, len(site.Encodings))
	for i, e := range site.Encodings {
		names[i] = e.Name
	}
	d.Precompressed = strings.Join(names, " ")
	for _, pg := range []struct {
		prefix string
		kind   viewpage.Kind
	}{{"/" + site.EmbedDir, viewpage.Embedded}, {"/" + site.UnbrandedDir, viewpage.Unbranded}, {"", viewpage.Branded}} {
		d.Pages = append(d.Pages, pageRule{pg.prefix, viewpage.CSP(pg.kind, ""), viewpage.FrameOptions(pg.kind)})
	}
	return d
}

// caddyBacktick returns page for a backtick-quoted Caddyfile token (which
// may span lines; heredocs need Caddy 2.7): its backticks escaped.
func caddyBacktick(page string) string {
	return strings.ReplaceAll(page, "`", "\\`")
}
