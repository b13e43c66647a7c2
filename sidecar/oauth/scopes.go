package oauth

import "github.com/guidepub/guidepub/sidecar/apitoken"

// scopeWords says, in plain words for the consent page, what each scope lets
// an app do on the owner's behalf.
var scopeWords = map[string]string{
	"guide.list":         "See the list of your guides and who can access them.",
	"guide.read":         "Read your guides' details (not billing).",
	"guide.write":        "Read and change your guides' data (not billing or processing).",
	"guide.process":      "Create and manage tasks and work orders for your guides.",
	"guide.billing":      "See your billing information.",
	"guide.events":       "Receive your guides' events and send them to your webhooks again.",
	"guide.draft.ro":     "Download your guides' draft data.",
	"viewer.data":        "Use the viewer's data for your guides.",
	"banner.list":        "See your public banners.",
	"user.account":       "See your account information and sub-accounts.",
	"credentials.manage": "Create, see and revoke your API tokens and OAuth apps.",
}

// Scopes returns every scope an app may be created with: the Portal API's.
func Scopes() []string { return append([]string(nil), apitoken.Scopes...) }

// ScopeDescription returns the consent page's words for scope.
func ScopeDescription(scope string) string {
	if d, ok := scopeWords[scope]; ok {
		return d
	}
	return scope
}
