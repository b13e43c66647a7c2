package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/store"
)

// tokenCommand returns the "token" command: create, list and revoke Portal
// API credentials.
func (e *env) tokenCommand() *cli.Command {
	storeFlags := flags(storeFlag(), privateFlag())
	return &cli.Command{
		Name:  "token",
		Usage: "create, list and revoke Portal API credentials",
		Description: `Credentials for the Portal API: an app id (X-Svc-App-Id) and a token value
(X-Svc-App-Token). The value is printed once, at creation; the store keeps only
its SHA-256 hash. Scopes are the Portal API's: ` + strings.Join(apitoken.Scopes, ", ") + `.

Examples:
   guidepub token create --private private --owner user-1001 --scopes guide.events
   guidepub token create --store postgres://guidepub@db/guidepub --owner user-1001 --scopes guide.events --expires 720h --json
   guidepub token list --private private --owner user-1001
   guidepub token revoke --private private gpa_0123456789abcdef`,
		Subcommands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create credentials for an owner; the token value is printed once and stored only as a hash",
				Description: `Examples:
   guidepub token create --private private --owner user-1001 --scopes guide.events
   guidepub token create --private private --create --owner user-1001 --scopes guide.events   # before the sidecar made the store
   guidepub token create --store postgres://guidepub@db/guidepub --owner user-1001 --scopes guide.events,guide.read --expires 720h --json`,
				Flags: flags(ownerFlag("owner (user) id whose guides the token may use (with --private, a note says when no guide there has this owner)"), tokenCreateFlags(),
					jsonFlag(`print {"appId": ..., "token": ...} for scripts`), storeFlags, createFlag()),
				Action: e.runTokenCreate,
			},
			{
				Name:  "list",
				Usage: "list credentials (never their values)",
				Description: `Examples:
   guidepub token list --private private
   guidepub token list --private private --owner user-1001 --json`,
				Flags:  flags(ownerFlag("only this owner's credentials"), jsonFlag("print a JSON array"), storeFlags),
				Action: e.runTokenList,
			},
			{
				Name:  "revoke",
				Usage: "revoke credentials: requests with them fail from now on",
				Description: `Examples:
   guidepub token revoke --private private gpa_0123456789abcdef`,
				ArgsUsage: "APPID",
				Flags:     storeFlags,
				Action:    e.runTokenRevoke,
			},
		},
	}
}

// openTokenStore opens the store named by --store or --private for the
// token, app and owner commands. A SQLite store that does not exist is an
// error, not a new empty store (a mistyped relative --store would
// otherwise start one and the credentials made there would be unknown to
// the sidecar), unless canCreate and --create are both given.
func openTokenStore(c *cli.Context, canCreate bool) (*store.Store, error) {
	dsn, err := storeDSN(c)
	if err != nil {
		return nil, err
	}
	if !store.IsPostgresURL(dsn) && !(canCreate && c.Bool("create")) {
		if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
			return nil, missingStoreError(dsn, canCreate)
		}
	}
	st, err := store.Open(c.Context, dsn, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}

// missingStoreError says that the SQLite store dsn does not exist, with the
// absolute path looked at when dsn is relative, and how to create one when
// the command can.
func missingStoreError(dsn string, canCreate bool) error {
	where := ""
	if abs, err := filepath.Abs(dsn); err == nil && abs != dsn {
		where = " (looked for " + abs + ")"
	}
	fix := "check --store or --private"
	if canCreate {
		fix += ", or pass --create to start a new, empty store"
	}
	return fmt.Errorf("store %s does not exist%s: %s", dsn, where, fix)
}

// createFlag is --create of the commands that add to a store.
func createFlag() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "create", EnvVars: envVars("create"),
		Usage: "create the SQLite store when it does not exist (without it, a store that is not there is an error)"}}
}

// parseScopes splits a comma-separated scope list, refusing unknown scopes.
func parseScopes(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, sc := range strings.Split(s, ",") {
		sc = strings.TrimSpace(sc)
		if sc == "" {
			continue
		}
		if !apitoken.ValidScope(sc) {
			return nil, fmt.Errorf("unknown scope %q; scopes are %s", sc, strings.Join(apitoken.Scopes, ", "))
		}
		if !seen[sc] {
			out = append(out, sc)
			seen[sc] = true
		}
	}
	if len(out) == 0 {
		return nil, errors.New("at least one scope is required")
	}
	return out, nil
}

// parseExpires parses --expires: a positive duration from now or an RFC 3339
// time in the future. "" is no expiry (nil).
func parseExpires(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	var t time.Time
	if d, err := time.ParseDuration(s); err == nil {
		t = now.Add(d)
	} else if t, err = time.Parse(time.RFC3339, s); err != nil {
		return nil, fmt.Errorf("%q is neither a duration (720h) nor an RFC 3339 time", s)
	}
	if !t.After(now) {
		return nil, fmt.Errorf("%q is not in the future", s)
	}
	t = t.UTC().Truncate(time.Second)
	return &t, nil
}

// runTokenCreate is "token create".
func (e *env) runTokenCreate(c *cli.Context) error {
	owner := strings.TrimSpace(c.String("owner"))
	if owner == "" {
		return usagef("--owner is required")
	}
	scopes, err := parseScopes(c.String("scopes"))
	if err != nil {
		return usagef("--scopes: %v", err)
	}
	now := e.clock.Now().UTC().Truncate(time.Second)
	expires, err := parseExpires(c.String("expires"), now)
	if err != nil {
		return usagef("--expires: %v", err)
	}
	st, err := openTokenStore(c, true)
	if err != nil {
		return err
	}
	defer st.Close()
	appID, value, err := apitoken.New(nil)
	if err != nil {
		return err
	}
	if err := st.CreateToken(c.Context, store.Token{
		AppID: appID, OwnerID: owner, Scopes: scopes, Hash: apitoken.Hash(value),
		CreatedAt: now, ExpiresAt: expires,
	}); err != nil {
		return err
	}
	noteOwnerWithoutGuides(e.stderr, c.String("private"), owner,
		"the token is created, and reaches "+owner+"'s guides once they are published")
	w := e.stdout
	if c.Bool("json") {
		return writeJSONLine(w, map[string]string{"appId": appID, "token": value})
	}
	fmt.Fprintf(w, "X-Svc-App-Id:    %s\nX-Svc-App-Token: %s\n", appID, value)
	fmt.Fprintf(w, "\nThis token value is shown only once: store it now. guidepub keeps only its hash.\n")
	fmt.Fprintf(w, "Owner %s, scopes %s, expires %s.\n", owner, strings.Join(scopes, ","), formatExpiry(expires))
	return nil
}

// formatExpiry returns t in RFC 3339, or "never" for nil.
func formatExpiry(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// tokenInfo is one credential as "token list --json" prints it.
type tokenInfo struct {
	AppID     string     `json:"appId"`
	OwnerID   string     `json:"ownerId"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	Status    string     `json:"status"` // active, expired or revoked
}

// runTokenList is "token list".
func (e *env) runTokenList(c *cli.Context) error {
	st, err := openTokenStore(c, false)
	if err != nil {
		return err
	}
	defer st.Close()
	toks, err := st.Tokens(c.Context, c.String("owner"))
	if err != nil {
		return err
	}
	now := e.clock.Now()
	infos := make([]tokenInfo, 0, len(toks))
	for _, t := range toks {
		status := "active"
		switch {
		case t.RevokedAt != nil:
			status = "revoked"
		case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
			status = "expired"
		}
		scopes := t.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		infos = append(infos, tokenInfo{AppID: t.AppID, OwnerID: t.OwnerID, Scopes: scopes,
			CreatedAt: t.CreatedAt.UTC(), ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt, Status: status})
	}
	w := e.stdout
	if c.Bool("json") {
		return writeJSONLine(w, infos)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APP ID\tOWNER\tSCOPES\tCREATED\tEXPIRES\tSTATUS")
	for _, t := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.AppID, t.OwnerID, strings.Join(t.Scopes, ","),
			t.CreatedAt.Format(time.RFC3339), formatExpiry(t.ExpiresAt), t.Status)
	}
	return tw.Flush()
}

// runTokenRevoke is "token revoke APPID"; flags may come before or after
// the APPID.
func (e *env) runTokenRevoke(c *cli.Context) error {
	c, err := withFlagsAfterArgs(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usagef("token revoke takes exactly one APPID")
	}
	appID := c.Args().First()
	st, err := openTokenStore(c, false)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RevokeToken(c.Context, appID, e.clock.Now().UTC()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no credentials with app id %q", appID)
		}
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %s (running sidecars refuse it within %s)\n", appID, sidecar.DefaultTokenCacheTTL)
	return nil
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// withFlagsAfterArgs returns c with the flags that follow its first
// argument parsed too: urfave/cli stops reading flags at the first
// argument, so "token revoke gpa_x --private DIR" would see "--private" as
// an argument. Flags given before the argument keep their values. It
// returns a *usageError for a bad flag.
func withFlagsAfterArgs(c *cli.Context) (*cli.Context, error) {
	args := c.Args().Slice()
	if len(args) < 2 {
		return c, nil
	}
	set := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range c.Command.Flags {
		if err := f.Apply(set); err != nil {
			return nil, err
		}
	}
	for _, name := range c.LocalFlagNames() {
		if err := set.Set(name, fmt.Sprint(c.Value(name))); err != nil {
			return nil, usagef("--%s: %v", name, err)
		}
	}
	positional := []string{args[0]}
	rest := args[1:]
	for len(rest) > 0 {
		if err := set.Parse(rest); err != nil {
			return nil, usagef("%v", err)
		}
		rest = set.Args()
		if len(rest) > 0 {
			positional = append(positional, rest[0])
			rest = rest[1:]
		}
	}
	if err := set.Parse(append([]string{"--"}, positional...)); err != nil {
		return nil, usagef("%v", err)
	}
	nc := cli.NewContext(c.App, set, c.Lineage()[1])
	nc.Command = c.Command
	nc.Context = c.Context
	return nc, nil
}
