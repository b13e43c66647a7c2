package publish

import (
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// redacted replaces a password, as url.URL.Redacted writes it.
const redacted = "xxxxx"

// userinfo finds the password of "scheme://user:password@" in any text,
// for a URL that does not parse.
var userinfo = regexp.MustCompile(`[A-Za-z0-9+.-]*://[^/@:\s"]*:([^/@\s"]+)@`)

// RedactURL returns the bucket URL rawURL fit to print: every password in
// it, of the URL itself and of a URL given as a query value (such as
// endpoint=https://user:password@host), replaced by "xxxxx", as
// url.URL.Redacted does. Every place guidepub prints a bucket URL (errors,
// logs, success lines) prints this.
func RedactURL(rawURL string) string { return redact(rawURL, rawURL) }

// RedactError returns err with the passwords of rawURL removed from its
// message, or nil for nil; errors.Is and errors.As still see err.
func RedactError(err error, rawURL string) error {
	if err == nil || len(secrets(rawURL)) == 0 {
		return err
	}
	return &redactedError{err: err, msg: redact(err.Error(), rawURL)}
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns text with every password of rawURL replaced.
func redact(text, rawURL string) string {
	for _, s := range secrets(rawURL) {
		text = strings.ReplaceAll(text, s, redacted)
	}
	return text
}

// secrets returns the passwords in rawURL as they may be printed (as
// given, decoded, escaped), longest first.
func secrets(rawURL string) []string {
	var out []string
	add := func(p string) {
		if p == "" || p == redacted {
			return
		}
		for _, s := range []string{p, url.QueryEscape(p), url.PathEscape(p), url.UserPassword("", p).String()[1:]} {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if d, err := url.QueryUnescape(p); err == nil && d != p {
			out = append(out, d)
		}
	}
	if u, err := url.Parse(rawURL); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if nu, err := url.Parse(v); err == nil && nu.User != nil {
					if p, ok := nu.User.Password(); ok {
						add(p)
					}
				}
			}
		}
	}
	for _, m := range userinfo.FindAllStringSubmatch(rawURL, -1) {
		add(m[1])
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}
