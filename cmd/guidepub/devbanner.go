package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
)

// devScopes are the scopes of the Portal API tokens and of the sample
// OAuth app dev makes.
var devScopes = []string{apitoken.ScopeEvents, "guide.read", "guide.list"}

// devBanner is what dev prints once ready: the URLs and commands to try,
// each ready to paste.
type devBanner struct {
	base, src, work, examples string
	samples                   bool // src is dev's copy of the samples
	records                   []site.GuideRecord
	sample                    *site.GuideRecord // the first ready guide, for the Portal API commands
	example                   *bundle.Guide     // the bundle kept aside to upload
	tokens                    map[string]devToken
	oauth                     *devOAuthSample
}

// devOAuthSample is the sample OAuth app as the banner shows it.
type devOAuthSample struct {
	owner, password string // password "" when the owner set their own
	try             oauthTry
}

// newDevBanner gathers what the banner shows after the first export rep:
// the exported guides, the example, and dev's credentials, made or found
// in the store st (see devCreds). On an error about credentials it
// returns the banner without them, and the error.
func newDevBanner(ctx context.Context, d *devSetup, st *store.Store, rep *exporter.Report, now time.Time) (devBanner, error) {
	b := devBanner{base: d.base, src: d.src, work: d.work, examples: filepath.Join(d.work, devExamplesDir),
		samples: d.src == filepath.Join(d.work, devSrcDir)}
	b.records = exportedRecords(d.priv, rep)
	b.example = readExample(b.examples)
	for i := range b.records {
		if b.records[i].Ready {
			b.sample = &b.records[i]
			break
		}
	}
	owners := map[string]bool{}
	for _, r := range b.records {
		owners[r.OwnerID] = true
	}
	if b.example != nil {
		owners[b.example.OwnerID] = true // to see the example's deliveries
	}
	creds, err := loadDevCreds(d.work)
	if err != nil {
		return b, err
	}
	if b.tokens, err = creds.tokens(ctx, st, slices.Sorted(maps.Keys(owners)), now); err != nil {
		return b, err
	}
	if b.sample == nil {
		return b, nil
	}
	app, err := creds.app(ctx, st, d.base+devCallbackPath, now)
	if err != nil {
		return b, err
	}
	pw, _, err := creds.ownerPassword(ctx, st, b.sample.OwnerID, now)
	if err != nil {
		return b, err
	}
	b.oauth = &devOAuthSample{owner: b.sample.OwnerID, password: pw,
		try: newOAuthTry(d.base, app.ClientID, app.ClientSecret, d.base+devCallbackPath, devScopes)}
	return b, nil
}

// write prints the banner.
func (b devBanner) write(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	b.writeViews(p)
	b.writePortalAPI(p)
	b.writeOAuth(w, p)
	b.writeUpload(p)
	b.writeWebhooks(p)
	p("")
	p("Health: %s/healthz  %s/readyz  %s/metrics", b.base, b.base, b.base)
	p("Work folder: %s (public tree out/, private tree private/, store %s, credentials %s)", b.work, devStoreFile, devCredsFile)
	p("Ctrl-C stops dev; the next run keeps the work folder (delete it to start over).")
}

// curl returns the curl command calling the Portal API with owner's token.
func (b devBanner) curl(owner, method, apiPath string) string {
	t, ok := b.tokens[owner]
	if !ok {
		return "(no token for " + owner + ")"
	}
	m := ""
	if method != "GET" {
		m = "-X " + method + " "
	}
	return fmt.Sprintf("curl -s %s-H 'X-Svc-App-Id: %s' -H 'X-Svc-App-Token: %s' %s%s", m, t.AppID, t.Token, b.base, apiPath)
}

// writeViews prints each exported guide's view pages and public documents.
func (b devBanner) writeViews(p func(string, ...any)) {
	p("")
	p("Views (public, no credentials):")
	for _, r := range b.records {
		id := r.DefaultViewID
		if r.Alias != "" {
			id = r.Alias
		}
		p("  guide %s (owner %s): views %s", r.GuideID, r.OwnerID, strings.Join(r.ViewIDs, ", "))
		for _, v := range r.ViewIDs {
			// The view's pages: branded, unbranded, embedded (docs/pages.md).
			p("    pages of %s: %s/%s  %s/%s/%s  %s/%s/%s", v, b.base, v, b.base, site.UnbrandedDir, v, b.base, site.EmbedDir, v)
		}
		p("    curl %s/%s", b.base, site.ViewFile(id, site.StatusFile))
		p("    curl %s/%s", b.base, site.ViewFile(id, site.SummaryFile))
		if r.Ready {
			p("    curl %s/%s", b.base, site.ViewFile(id, site.AutofillFile))
		}
	}
}

// writePortalAPI prints the owners' tokens and commands using them.
func (b devBanner) writePortalAPI(p func(string, ...any)) {
	if len(b.tokens) == 0 {
		return
	}
	p("")
	p("Portal API: a token with scopes %s for each owner, made on the first run and used again on", strings.Join(devScopes, ","))
	p("every run (the store keeps a hash; the values are in %s):", filepath.Join(b.work, devCredsFile))
	for _, o := range slices.Sorted(maps.Keys(b.tokens)) {
		p("  owner %s: X-Svc-App-Id: %s  X-Svc-App-Token: %s", o, b.tokens[o].AppID, b.tokens[o].Token)
	}
	if b.sample == nil {
		return
	}
	p("  try:")
	p("    %s", b.curl(b.sample.OwnerID, "POST", "/api/v1/integrations/test"))
	for _, call := range []struct{ method, path string }{{"GET", "ready/object"}, {"POST", "ready/dispatch"}, {"GET", "deliveries"}} {
		p("    %s", b.curl(b.sample.OwnerID, call.method, "/api/v1/guides/"+b.sample.GuideID+"/events/"+call.path))
	}
	p("  The ready event's manageUrl, %s/guides/%s, is the Portal's page of the guide in production;", b.base, b.sample.GuideID)
	p("  here it is a page of dev that says so and links the guide's views and documents.")
}

// writeOAuth prints the sample OAuth app and the authorization code grant
// to try with it.
func (b devBanner) writeOAuth(w io.Writer, p func(string, ...any)) {
	o := b.oauth
	if o == nil {
		return
	}
	p("")
	p("OAuth: the sample app %q (client id %s, secret %s) may ask for %s;", devAppName, o.try.clientID, o.try.clientSecret, strings.Join(devScopes, ","))
	signIn := o.owner + " (password: " + o.password + ")"
	if o.password == "" {
		signIn = o.owner + " with the password set by guidepub owner password"
	}
	p("owner %s approves it for their guides (docs/oauth.md):", o.owner)
	o.try.print(w, "  ", signIn, "The browser comes back to "+b.base+devCallbackPath+", which shows the code and this command with it.")
	p("  Or without a browser, curl alone signing in, allowing and exchanging (from the repository's root):")
	p("     %s", o.try.scriptCommand(o.owner, o.password))
}

// writeUpload prints how to upload the example, and what to try after:
// the copy when the example is not in the source folder yet, else that it
// is there, and how to upload it again (a copy over it would nest it).
func (b devBanner) writeUpload(p func(string, ...any)) {
	p("")
	p("Upload: copy a bundle folder into %s. It is exported a moment after its last file lands;", b.src)
	p("a bundle that is not valid yet is reported here and the published version stays. Deleting the")
	p("folder unpublishes its views.")
	ex := b.example
	if ex == nil {
		return
	}
	from, to := filepath.Join(b.examples, devExample), filepath.Join(b.src, devExample)
	status := "curl " + b.base + "/" + site.ViewFile(ex.DefaultView().ViewID, site.StatusFile)
	deliveries := b.curl(ex.OwnerID, "GET", "/api/v1/guides/"+ex.GuideID+"/events/deliveries")
	if _, err := os.Stat(to); err == nil {
		p("  The example is uploaded already (%s is there). Its status and its ready event's delivery:", to)
		p("    %s", status)
		p("    %s", deliveries)
		p("  To upload it again, delete the folder, wait for its views to answer 404, and copy it back:")
		p("    rm -r %s", to)
		p("    cp -r %s %s/", from, b.src)
		p("  Copied back unchanged, it is served again, but no webhook is sent, since one")
	} else {
		p("  cp -r %s %s/", from, b.src)
		p("  After the upload (before it, these answer 404):")
		p("    %s", status)
		p("    %s", deliveries)
		p("  The second command lists the ready event's delivery to this process's receiver. Upload it again")
		p("  unchanged (delete the folder, copy it back): it is served again, but no webhook is sent, since one")
	}
	p("  delivery goes out per revision; the log says \"unchanged revision, not sent again\". Edit its")
	p("  guide.json for a new revision and a new event, or send the event again:")
	p("    %s", b.curl(ex.OwnerID, "POST", "/api/v1/guides/"+ex.GuideID+"/events/ready/dispatch"))
}

// writeWebhooks prints where ready events go and how to see them.
func (b devBanner) writeWebhooks(p func(string, ...any)) {
	p("")
	p("Webhooks: each export that changes a ready guide POSTs its ready event to the guide's webhooks")
	if b.samples {
		p("(guide.json \"webhooks\"). The sample bundles point at %s%s, which checks the signature and logs", b.base, devReceiverPath)
		p("\"webhook received\" with signature=valid here.")
	} else {
		p("(guide.json \"webhooks\"). A webhook at %s%s has its signature checked and is logged", b.base, devReceiverPath)
		p("as \"webhook received\" here.")
	}
	if b.sample != nil {
		p("  Deliveries and their attempts: %s", b.curl(b.sample.OwnerID, "GET", "/api/v1/guides/"+b.sample.GuideID+"/events/deliveries"))
	}
}

// exportedRecords returns the records of the guides rep exported.
func exportedRecords(priv string, rep *exporter.Report) []site.GuideRecord {
	var records []site.GuideRecord
	for _, r := range rep.Guides {
		if r.Err != nil || r.GuideID == "" {
			continue
		}
		if rec, err := readRecord(priv, r.GuideID); err == nil {
			records = append(records, rec)
		}
	}
	return records
}

// readExample returns the first valid example bundle under dir, or nil.
func readExample(dir string) *bundle.Guide {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), bundle.FileName))
		if err != nil {
			continue
		}
		if eg, problems := bundle.Parse(data); len(problems) == 0 {
			return eg
		}
	}
	return nil
}
