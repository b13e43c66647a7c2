package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site/clock"
)

// openOAuth builds the authorization server of a sidecar: its issuer is the
// sidecar's --base-url.
func openOAuth(ctx context.Context, cfg sidecarConfig, st *store.Store, logger *slog.Logger) (*oauth.Server, error) {
	ocfg := oauth.DefaultConfig()
	if cfg.BaseURL != "" {
		ocfg.Issuer = strings.TrimRight(cfg.BaseURL, "/")
	}
	if cfg.AccessTokenTTL > 0 {
		ocfg.AccessTokenLifespan = cfg.AccessTokenTTL
	}
	if cfg.RefreshTokenTTL > 0 {
		ocfg.RefreshTokenLifespan = cfg.RefreshTokenTTL
	}
	ocfg.TrustedProxies = cfg.TrustedProxies
	ocfg.Now = clock.Or(cfg.Clock).Now
	ocfg.Logger = logger
	return oauth.New(ctx, ocfg, st)
}

// appOwnerUsage explains an app's --owner, which is easily taken for the
// owner whose guides it reaches.
const appOwnerUsage = "id of the user (an integrator) who registers and manages the app; app list --owner finds it by this id. " +
	"It is not whose guides the app reaches: an access token reaches the guides of the owner who signs in and approves the app"

// appCommand returns the "app" command: create, list and revoke OAuth apps.
func appCommand() *cli.Command {
	storeFlags := flags(storeFlag(), privateFlag())
	return &cli.Command{
		Name:  "app",
		Usage: "create, list and revoke OAuth apps",
		Description: `OAuth apps call the Portal API for the owners who approve them, with
X-Svc-App-Id: <client id> and X-Svc-App-Token: <access token>. The client
secret is printed once, at creation; the store keeps only its hash.

Examples:
   guidepub app create --private private --owner integrator-1 --name "Listing Sync" --redirect-uri https://sync.example.com/callback --scopes guide.events,guide.read
   guidepub app list --private private --json
   guidepub app revoke --private private gpc_0123456789abcdef`,
		Subcommands: []*cli.Command{
			{
				Name:  "create",
				Usage: "register an app; its client secret is printed once and stored only as a hash",
				Description: `Prints the client id and secret, then a try of the authorization code grant
against the sidecar at --base-url: an authorize URL with a fresh PKCE pair
(code_challenge, S256) and the curl commands that exchange the code, with the
matching code_verifier, and call the Portal API (see docs/oauth.md).

Examples:
   guidepub app create --private private --owner integrator-1 --name "Listing Sync" --redirect-uri https://sync.example.com/callback --scopes guide.events,guide.read
   guidepub app create --store .guidepub/guidepub.db --base-url http://127.0.0.1:8080 --owner integrator-1 --name "Listing Sync" --redirect-uri http://127.0.0.1:9000/callback --scopes guide.events
   guidepub app create --store postgres://guidepub@db/guidepub --owner integrator-1 --name "Desk App" --public --redirect-uri http://127.0.0.1:9000/callback --scopes guide.events --json`,
				Flags: flags([]cli.Flag{
					&cli.StringFlag{Name: "owner", Usage: appOwnerUsage, EnvVars: envVars("owner")},
					&cli.StringFlag{Name: "name", Usage: "the app's name, shown to owners on the consent page", EnvVars: envVars("name")},
					&cli.StringSliceFlag{Name: "redirect-uri", EnvVars: envVars("redirect-uri"),
						Usage: "a redirect URI (https, or http on a loopback address); repeat, or comma-separate, for more"},
					&cli.StringFlag{Name: "scopes", Usage: "comma-separated scopes the app may ask for: " + strings.Join(oauth.Scopes(), ","), EnvVars: envVars("scopes")},
					&cli.BoolFlag{Name: "public", EnvVars: envVars("public"), Usage: "an app without a client secret (native or browser app; PKCE still required)"},
					&cli.BoolFlag{Name: "json", Usage: `print {"clientId", "clientSecret", "authorizeUrl", "codeVerifier"} for scripts`, EnvVars: envVars("json")},
					stringFlag("base-url", exporter.DefaultBaseURL, "the sidecar's base URL (its --base-url), for the authorize URL and commands printed to try the app"),
				}, storeFlags, createFlag()),
				Action: appCreate,
			},
			{
				Name:  "list",
				Usage: "list apps (never their secrets)",
				Description: `Examples:
   guidepub app list --private private
   guidepub app list --store postgres://guidepub@db/guidepub --owner integrator-1 --json`,
				Flags:  flags(ownerFlag("only the apps registered by this user (app create --owner)"), jsonFlag("print a JSON array"), storeFlags),
				Action: appList,
			},
			{
				Name:  "revoke",
				Usage: "revoke an app and every token issued to it",
				Description: `Examples:
   guidepub app revoke --private private gpc_0123456789abcdef`,
				ArgsUsage: "CLIENTID",
				Flags:     storeFlags,
				Action:    appRevoke,
			},
		},
	}
}

func appCreate(c *cli.Context) error {
	owner, name := strings.TrimSpace(c.String("owner")), strings.TrimSpace(c.String("name"))
	if owner == "" || name == "" {
		return usagef("--owner and --name are required")
	}
	uris, err := parseRedirectURIs(c.StringSlice("redirect-uri"))
	if err != nil {
		return usagef("--redirect-uri: %v", err)
	}
	scopes, err := parseScopes(c.String("scopes"))
	if err != nil {
		return usagef("--scopes: %v", err)
	}
	base, err := parseBaseURL(c.String("base-url"))
	if err != nil {
		return usagef("--base-url: %v", err)
	}
	st, err := openTokenStore(c, true)
	if err != nil {
		return err
	}
	defer st.Close()
	app, secret, err := registerApp(c.Context, st, store.App{OwnerID: owner, Name: name, RedirectURIs: uris, Scopes: scopes}, c.Bool("public"))
	if err != nil {
		return err
	}
	try := newOAuthTry(base, app.ClientID, secret, uris[0], scopes)
	w := c.App.Writer
	if c.Bool("json") {
		out := map[string]string{"clientId": app.ClientID, "authorizeUrl": try.authorizeURL(), "codeVerifier": try.verifier}
		if secret != "" {
			out["clientSecret"] = secret
		}
		return writeJSONLine(w, out)
	}
	fmt.Fprintf(w, "client_id:     %s\n", app.ClientID)
	if secret != "" {
		fmt.Fprintf(w, "client_secret: %s\n\nThis secret is shown only once: store it now. guidepub keeps only its hash.\n", secret)
	} else {
		fmt.Fprintf(w, "\nA public app: no client secret; it must use PKCE (S256).\n")
	}
	fmt.Fprintf(w, "App %q of %s, scopes %s, redirect URIs %s.\n", name, owner, strings.Join(scopes, ","), strings.Join(uris, " "))
	fmt.Fprintf(w, "\nTry it on the sidecar at %s (--base-url), with a PKCE pair made for this try:\n", base)
	try.print(w, "", "an owner (guidepub owner password)",
		"The browser is sent to "+uris[0]+"?code=…&state="+try.state+". If nothing answers there, it shows an error page: the code is in its address bar.")
	return nil
}

// registerApp stores a new app with app's owner, name, redirect URIs and
// scopes, a fresh client id and, unless public, a fresh client secret,
// which it returns (only its hash is stored).
func registerApp(ctx context.Context, st *store.Store, app store.App, public bool) (store.App, string, error) {
	id, err := oauth.NewClientID()
	if err != nil {
		return app, "", err
	}
	app.ClientID, app.CreatedAt = id, time.Now().UTC().Truncate(time.Second)
	secret := ""
	if !public {
		if secret, app.SecretHash, err = oauth.NewClientSecret(); err != nil {
			return app, "", err
		}
	}
	return app, secret, st.CreateApp(ctx, app)
}

// parseBaseURL checks a base URL (http or https, a host, nothing after the
// path) and returns it without its trailing slash.
func parseBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: want an http or https URL such as http://127.0.0.1:8080", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// parseRedirectURIs checks each redirect URI: absolute, no fragment, https
// or http on a loopback host (RFC 8252), and at least one.
func parseRedirectURIs(in []string) ([]string, error) {
	var out []string
	for _, raw := range in {
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
			return nil, fmt.Errorf("%q: want an absolute URL without fragment", raw)
		}
		loopback := u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1"
		if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
			return nil, fmt.Errorf("%q: want https, or http on a loopback address", raw)
		}
		out = append(out, raw)
	}
	if len(out) == 0 {
		return nil, errors.New("at least one is required")
	}
	return out, nil
}

// appInfo is one app as "app list --json" prints it.
type appInfo struct {
	ClientID     string     `json:"clientId"`
	OwnerID      string     `json:"ownerId"`
	Name         string     `json:"name"`
	Public       bool       `json:"public"`
	RedirectURIs []string   `json:"redirectUris"`
	Scopes       []string   `json:"scopes"`
	CreatedAt    time.Time  `json:"createdAt"`
	RevokedAt    *time.Time `json:"revokedAt,omitempty"`
}

func appList(c *cli.Context) error {
	st, err := openTokenStore(c, true)
	if err != nil {
		return err
	}
	defer st.Close()
	apps, err := st.Apps(c.Context, c.String("owner"))
	if err != nil {
		return err
	}
	infos := make([]appInfo, 0, len(apps))
	for _, a := range apps {
		infos = append(infos, appInfo{ClientID: a.ClientID, OwnerID: a.OwnerID, Name: a.Name, Public: a.Public(),
			RedirectURIs: a.RedirectURIs, Scopes: a.Scopes, CreatedAt: a.CreatedAt, RevokedAt: a.RevokedAt})
	}
	if c.Bool("json") {
		return writeJSONLine(c.App.Writer, infos)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT ID\tOWNER\tNAME\tSCOPES\tCREATED\tSTATUS")
	for _, a := range infos {
		status := "active"
		if a.RevokedAt != nil {
			status = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ClientID, a.OwnerID, a.Name, strings.Join(a.Scopes, ","),
			a.CreatedAt.Format(time.RFC3339), status)
	}
	return tw.Flush()
}

func appRevoke(c *cli.Context) error {
	c, err := withFlagsAfterArgs(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usagef("app revoke takes exactly one CLIENTID")
	}
	id := c.Args().First()
	st, err := openTokenStore(c, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RevokeApp(c.Context, id, time.Now().UTC()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no app with client id %q", id)
		}
		return err
	}
	fmt.Fprintf(c.App.Writer, "revoked %s and every token issued to it\n", id)
	return nil
}

// ownerCommand returns the "owner" command: owners' sign-in passwords.
func ownerCommand() *cli.Command {
	return &cli.Command{
		Name:  "owner",
		Usage: "set owners' sign-in passwords (for approving OAuth apps)",
		Description: `Examples:
   printf '%s\n' "$PASSWORD" | guidepub owner password --owner user-1001 --private private`,
		Subcommands: []*cli.Command{{
			Name:  "password",
			Usage: "set an owner's password, read from standard input (the first line); stored as an argon2id hash",
			Description: `The owner is the ownerId of guides (guide.json): signed in, they approve an
app, whose access token then reaches their guides. With --private (alone or
beside --store), a note says when no guide published there has that owner,
and names the owners that have guides.

Examples:
   printf '%s\n' "$PASSWORD" | guidepub owner password --owner user-1001 --private private
   printf '%s\n' "$PASSWORD" | guidepub owner password --owner user-1001 --store .guidepub/guidepub.db --private .guidepub/private`,
			Flags:  flags(ownerFlag("owner (user) id who signs in: the ownerId of their guides"), storeFlag(), privateFlag(), createFlag()),
			Action: ownerPassword,
		}},
	}
}

func ownerPassword(c *cli.Context) error {
	owner := strings.TrimSpace(c.String("owner"))
	if owner == "" {
		return usagef("--owner is required")
	}
	if len(owner) > oauth.MaxOwnerName {
		return usagef("--owner is %d bytes: an owner name longer than %d bytes cannot sign in", len(owner), oauth.MaxOwnerName)
	}
	pw, err := readPassword(c.App.Reader)
	if err != nil {
		return usagef("%v", err)
	}
	hash, err := oauth.HashPassword(pw)
	if err != nil {
		return usagef("%v", err)
	}
	st, err := openTokenStore(c, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetOwnerPassword(c.Context, owner, hash, time.Now().UTC()); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "password of %s set\n", owner)
	noteOwnerWithoutGuides(c.App.ErrWriter, c.String("private"), owner,
		"the password is set, and "+owner+" can approve apps for the guides they will own")
	return nil
}

// readPassword reads the first line of r (os.Stdin when nil), without its
// line ending.
func readPassword(r io.Reader) (string, error) {
	if r == nil {
		r = os.Stdin
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input")
	}
	return line, nil
}
