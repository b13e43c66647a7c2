package serve

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// ConfigOptions are the deployment facts a printed configuration needs.
type ConfigOptions struct {
	Dir     string // absolute path of the exported public tree
	Listen  string // host:port (or :port) the web server listens on
	Sidecar string // host:port of the sidecar for site.SidecarRoutes; empty: no proxy routes
}

// ConfigKinds lists the kinds WriteConfig accepts.
var ConfigKinds = []string{"nginx", "caddy", "headers", "404"}

// WriteConfig writes the serving rules of Server for another web server:
// "nginx" (a server block for the http context), "caddy" (a Caddyfile site
// block), "headers" (a _headers file for Netlify or Cloudflare Pages) or
// "404" (the HTML 404 page, for hosts that serve a 404.html). It
// returns an error for an unknown kind, invalid options, or a failed write.
func WriteConfig(w io.Writer, kind string, opts ConfigOptions) error {
	if kind != "headers" && kind != "404" {
		if opts.Dir == "" || opts.Listen == "" {
			return fmt.Errorf("serve: a %s configuration needs the tree's folder and a listen address", kind)
		}
		for _, v := range []string{opts.Dir, opts.Listen, opts.Sidecar} {
			if strings.ContainsAny(v, "\"'`;{}\n\r\\$ \t") {
				return fmt.Errorf("serve: %q cannot be written safely into a %s configuration", v, kind)
			}
		}
	}
	var text string
	switch kind {
	case "nginx":
		text = nginxConfig(opts)
	case "caddy":
		text = caddyConfig(opts)
	case "headers":
		text = headersFile()
	case "404":
		text = string(viewpage.NotFound)
	default:
		return fmt.Errorf("serve: unknown configuration kind %q (want one of %s)", kind, strings.Join(ConfigKinds, ", "))
	}
	_, err := io.WriteString(w, text)
	return err
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

func nginxConfig(o ConfigOptions) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("# guidepub public tree for nginx: a server block for the http { } context.")
	p("# Written by `guidepub serve --print-config nginx`; it follows `guidepub serve`:")
	p("# documents are extensionless JSON with precompressed siblings, media are")
	p("# plain files. nginx serves only the .gz siblings (gzip_static): .br needs the")
	p("# third-party ngx_brotli module (brotli_static on) and .zst is not served, so")
	p("# a client that accepts only br or zstd gets identity. nginx's ETag is made")
	p("# of the file's mtime and size, not of its bytes.")
	p("server {")
	p("    listen %s;", o.Listen)
	p("    root %s;", o.Dir)
	p("    server_tokens off;")
	p("    charset off;")
	p("    gzip off;")
	p("    etag on;")
	p("    disable_symlinks on; # never follow a link out of the tree")
	p("    absolute_redirect off; # Location: /<id>, as guidepub serve sends it")
	p("    # add_header lines are not inherited into a location that has its own,")
	p("    # so every location repeats the headers it needs.")
	p("")
	p("    # A browser (Accept names text/html) gets the HTML 404 page, other")
	p("    # clients the JSON body.")
	p("    set $not_found json;")
	p(`    if ($http_accept ~* "text/html") { set $not_found html; }`)
	p("    error_page 403 404 = /.not_found.$not_found;")
	p("    error_page 405 = @method_not_allowed;")
	p("")
	p("    # A page URL with a trailing slash redirects to the page.")
	p(`    location ~ "%s" { return 301 $1$is_args$args; }`, slashPagePattern())
	p("")
	p("    # Temp files, dot-files and compressed siblings asked for by name.")
	p(`    location ~ "/\." { return 404; }`)
	p(`    location ~ "%s" { return 404; }`, siblingPattern())
	p("")
	p("    # Documents: JSON, precompressed .gz served when the client accepts gzip.")
	p(`    location ~ "%s$" {`, documentPattern())
	p("        types { }")
	p("        default_type application/json;")
	p("        gzip_static on;")
	p("        try_files $uri =404;")
	p("        add_header Vary Accept-Encoding always;")
	p(`        add_header Cache-Control "%s" always;`, site.DocumentCacheControl)
	p("        add_header X-Content-Type-Options nosniff always;")
	p("    }")
	p("")
	p("    # Media of a view, typed by extension.")
	p(`    location ~ "^/[^/]+/%s/.*[^/]$" {`, site.MediaDir)
	p("        types {")
	types, exts := sortedMediaTypes()
	for _, t := range types {
		p("            %s %s;", t, strings.Join(exts[t], " "))
	}
	p("        }")
	p("        default_type application/octet-stream;")
	p("        try_files $uri =404;")
	p(`        add_header Cache-Control "%s" always;`, site.MediaCacheControl)
	p("        add_header X-Content-Type-Options nosniff always;")
	p("    }")
	p("")
	nginxStylesheet(p)
	p("    # View pages (docs/pages.md): /<id>, /u/<id> and /embed/<id> (and")
	p("    # /<id>/<lang>...) are the index.html of their folders; the branded")
	p("    # page may not be framed.")
	for _, pg := range []struct {
		pattern, file string
		kind          viewpage.Kind
	}{
		{`^/embed/(` + pageIDPattern() + `)$`, "/embed/$1/" + site.PageFile, viewpage.Embedded},
		{`^/u/(` + pageIDPattern() + `)$`, "/u/$1/" + site.PageFile, viewpage.Unbranded},
		{`^/(` + pageIDPattern() + `)$`, "/$1/" + site.PageFile, viewpage.Branded},
	} {
		p(`    location ~ "%s" {`, pg.pattern)
		p("        types { }")
		p(`        default_type "%s";`, site.PageType)
		p("        gzip_static on;")
		p("        try_files %s =404;", pg.file)
		p("        add_header Vary Accept-Encoding always;")
		p(`        add_header Cache-Control "%s" always;`, site.DocumentCacheControl)
		p("        add_header X-Content-Type-Options nosniff always;")
		p(`        add_header Content-Security-Policy "%s" always;`, viewpage.CSP(pg.kind, ""))
		if fo := viewpage.FrameOptions(pg.kind); fo != "" {
			p("        add_header X-Frame-Options %s always;", fo)
		}
		p("        add_header Referrer-Policy strict-origin-when-cross-origin always;")
		p("    }")
	}
	p(`    location = /robots.txt { default_type text/plain; return 200 "User-agent: *\nAllow: /\n"; }`)
	if o.Sidecar != "" {
		p("")
		p("    # The sidecar: Portal API, private documents, OAuth authorization server.")
		p("    # It counts failed sign-ins by the address in X-Forwarded-For only when")
		p("    # this server's address is in its --trusted-proxies")
		p("    # (GUIDEPUB_TRUSTED_PROXIES); otherwise every client is this proxy.")
		for _, route := range site.SidecarRoutes {
			if strings.HasSuffix(route, "/") {
				p("    location ^~ %s {", route)
			} else {
				p("    location = %s {", route)
			}
			p("        proxy_pass http://%s;", o.Sidecar)
			p("        proxy_set_header Host $host;")
			p("        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;")
			p("        proxy_set_header X-Forwarded-Proto $scheme;")
			p("    }")
		}
	}
	p("")
	p("    location / { return 404; }")
	p("")
	p("    location = /.not_found.json {")
	p("        internal;")
	p("        types { }")
	p("        default_type application/json;")
	p("        add_header Cache-Control no-store always;")
	p("        add_header X-Content-Type-Options nosniff always;")
	p(`        return 404 '{"code":"not_found"}\n';`)
	p("    }")
	p("    location = /.not_found.html {")
	p("        internal;")
	p("        types { }")
	p(`        default_type "%s";`, site.PageType)
	p("        add_header Cache-Control no-store always;")
	p("        add_header X-Content-Type-Options nosniff always;")
	p(`        add_header Content-Security-Policy "%s" always;`, viewpage.NotFoundCSP)
	p("        add_header Referrer-Policy strict-origin-when-cross-origin always;")
	p("        return 404 %s;", nginxString(string(viewpage.NotFound)))
	p("    }")
	p("    location @method_not_allowed {")
	p("        types { }")
	p("        default_type application/json;")
	p(`        add_header Allow "GET, HEAD" always;`)
	p("        add_header Cache-Control no-store always;")
	p("        add_header X-Content-Type-Options nosniff always;")
	p(`        return 405 '{"code":"method_not_allowed"}\n';`)
	p("    }")
	p("}")
	return b.String()
}

// nginxStylesheet writes the location of the pages' stylesheet with p.
func nginxStylesheet(p func(format string, a ...any)) {
	p("    # The pages' stylesheet (docs/pages.md#the-stylesheet): its name is a")
	p("    # hash of its bytes, so it is cached for good; precompressed like a document.")
	p(`    location ~ "%s" {`, site.StylesheetPattern)
	p("        types { }")
	p(`        default_type "%s";`, site.StylesheetType)
	p("        gzip_static on;")
	p("        try_files $uri =404;")
	p("        add_header Vary Accept-Encoding always;")
	p(`        add_header Cache-Control "%s" always;`, site.ImmutableCacheControl)
	p("        add_header X-Content-Type-Options nosniff always;")
	p("    }")
	p("")
}

func caddyConfig(o ConfigOptions) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	precompressed := make([]string, len(site.Encodings))
	for i, e := range site.Encodings {
		precompressed[i] = e.Name
	}
	p("# guidepub public tree for Caddy 2.6 or later: a Caddyfile site block.")
	p("# Written by `guidepub serve --print-config caddy`; it follows `guidepub serve`.")
	p("# Caddy picks the .br, .zst or .gz sibling by Accept-Encoding, sends")
	p("# Vary: Accept-Encoding and an ETag per encoding; extensionless documents")
	p("# get their Content-Type from the header rule below.")
	p("# It listens in plain HTTP on the address, as guidepub serve does; for")
	p("# Caddy's automatic HTTPS, put the site's host name in place of the address.")
	p("http://%s {", o.Listen)
	p("    root * %s", o.Dir)
	p("")
	p("    @hidden path_regexp hidden `/\\.`")
	p("    @siblings path_regexp siblings `%s`", siblingPattern())
	p("    @documents path_regexp documents `%s$`", documentPattern())
	p("    @media path_regexp media `^/[^/]+/%s/.*[^/]$`", site.MediaDir)
	p("    @stylesheet path_regexp stylesheet `%s`", site.StylesheetPattern)
	p("    @other_methods not method GET HEAD")
	p("    # View pages (docs/pages.md): /<id>, /u/<id>, /embed/<id>, and the")
	p("    # same with /<lang> for the other languages.")
	p("    @embed_page path_regexp embed_page `^/embed/(%s)$`", pageIDPattern())
	p("    @unbranded_page path_regexp unbranded_page `^/u/(%s)$`", pageIDPattern())
	p("    @page {")
	p("        path_regexp page `^/(%s)$`", pageIDPattern())
	p("        not path /u/* /embed/*")
	p("    }")
	p("    @slash path_regexp slash `%s`", slashPagePattern())
	p("    @html header Accept *text/html*")
	p("")
	p("    header X-Content-Type-Options nosniff")
	p(`    header @embed_page Content-Security-Policy "%s"`, viewpage.CSP(viewpage.Embedded, ""))
	p(`    header @unbranded_page Content-Security-Policy "%s"`, viewpage.CSP(viewpage.Unbranded, ""))
	p(`    header @page Content-Security-Policy "%s"`, viewpage.CSP(viewpage.Branded, ""))
	p("    header @page X-Frame-Options DENY")
	p("    redir @slash {re.slash.1}{?query} 301")
	p("    header @documents Content-Type application/json")
	p(`    header @documents Cache-Control "%s"`, site.DocumentCacheControl)
	p(`    header @media Cache-Control "%s"`, site.MediaCacheControl)
	p(`    header @stylesheet Content-Type "%s"`, site.StylesheetType)
	p(`    header @stylesheet Cache-Control "%s"`, site.ImmutableCacheControl)
	for _, m := range []string{"@embed_page", "@unbranded_page", "@page", "@slash"} {
		p(`    header %s Cache-Control "%s"`, m, site.DocumentCacheControl)
	}
	p("")
	if o.Sidecar != "" {
		p("    # The sidecar counts failed sign-ins by the address reverse_proxy")
		p("    # puts in X-Forwarded-For only when this server's address is in its")
		p("    # --trusted-proxies (GUIDEPUB_TRUSTED_PROXIES).")
		for _, route := range site.SidecarRoutes {
			if strings.HasSuffix(route, "/") {
				route += "*"
			}
			p("    handle %s {", route)
			p("        reverse_proxy %s", o.Sidecar)
			p("    }")
		}
	}
	p("    handle @hidden {")
	p("        error 404")
	p("    }")
	p("    handle @siblings {")
	p("        error 404")
	p("    }")
	p("    handle @other_methods {")
	p("        error 405")
	p("    }")
	p("    handle @documents {")
	p("        file_server {")
	p("            precompressed %s", strings.Join(precompressed, " "))
	p("        }")
	p("    }")
	p("    handle @media {")
	p("        file_server")
	p("    }")
	p("    handle @stylesheet {")
	p("        file_server {")
	p("            precompressed %s", strings.Join(precompressed, " "))
	p("        }")
	p("    }")
	p("    handle @embed_page {")
	p("        rewrite * /embed/{re.embed_page.1}/%s", site.PageFile)
	p("        file_server {")
	p("            precompressed %s", strings.Join(precompressed, " "))
	p("        }")
	p("    }")
	p("    handle @unbranded_page {")
	p("        rewrite * /u/{re.unbranded_page.1}/%s", site.PageFile)
	p("        file_server {")
	p("            precompressed %s", strings.Join(precompressed, " "))
	p("        }")
	p("    }")
	p("    handle @page {")
	p("        rewrite * /{re.page.1}/%s", site.PageFile)
	p("        file_server {")
	p("            precompressed %s", strings.Join(precompressed, " "))
	p("        }")
	p("    }")
	p("    handle {")
	p("        error 404")
	p("    }")
	p("")
	p("    handle_errors {")
	p("        # Not the headers of the page a path looked like (deletions are")
	p("        # deferred: the 404 page sets its own policy).")
	p("        header -X-Frame-Options")
	p("        @not_allowed expression {err.status_code} == 405")
	p("        handle @not_allowed {")
	p(`            header Allow "GET, HEAD"`)
	p("            header Content-Type application/json")
	p("            header Cache-Control no-store")
	p("            header -Content-Security-Policy")
	p("            respond `{\"code\":\"method_not_allowed\"}\n` 405")
	p("        }")
	p("        handle @html {")
	p(`            header Content-Type "%s"`, site.PageType)
	p("            header Cache-Control no-store")
	p(`            header Content-Security-Policy "%s"`, viewpage.NotFoundCSP)
	p("            respond `%s` 404", caddyBacktick(viewpage.NotFound))
	p("        }")
	p("        handle {")
	p("            header Content-Type application/json")
	p("            header Cache-Control no-store")
	p("            header -Content-Security-Policy")
	p("            respond `{\"code\":\"not_found\"}\n` 404")
	p("        }")
	p("    }")
	p("}")
	return b.String()
}

// caddyBacktick returns page for a backtick-quoted Caddyfile token (which
// may span lines; heredocs need Caddy 2.7): its backticks escaped.
func caddyBacktick(page []byte) string {
	return strings.ReplaceAll(string(page), "`", "\\`")
}

func headersFile() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("# guidepub public tree: _headers for hosts that read one (Netlify, Cloudflare Pages).")
	p("# Written by `guidepub serve --print-config headers`; put it at the root of the")
	p("# published folder. These hosts compress on their own and send Vary themselves;")
	p("# upload the tree without the .br/.zst/.gz siblings (they would be served as files).")
	p("# They answer a missing path with /404.html: save `guidepub serve --print-config 404`")
	p("# there (the HTML 404 page; such hosts send it to every client, JSON ones included).")
	for _, d := range site.Documents {
		p("/*/%s", d)
		p("  Content-Type: application/json")
		p("  Cache-Control: %s", site.DocumentCacheControl)
		p("  X-Content-Type-Options: nosniff")
	}
	p("/*/%s/*", site.MediaDir)
	p("  Cache-Control: %s", site.MediaCacheControl)
	p("  X-Content-Type-Options: nosniff")
	p("/%s/*", site.AssetsDir)
	p("  Content-Type: %s", site.StylesheetType)
	p("  Cache-Control: %s", site.ImmutableCacheControl)
	p("  X-Content-Type-Options: nosniff")
	// View pages: these hosts answer /<id> with <id>/index.html themselves.
	p("/%s/*", site.EmbedDir)
	p("  Content-Security-Policy: %s", viewpage.CSP(viewpage.Embedded, ""))
	p("/%s/*", site.UnbrandedDir)
	p("  Content-Security-Policy: %s", viewpage.CSP(viewpage.Unbranded, ""))
	p("/*/%s", site.PageFile)
	p("  Content-Security-Policy: %s", viewpage.CSP(viewpage.Branded, ""))
	p("  X-Frame-Options: DENY")
	return b.String()
}
