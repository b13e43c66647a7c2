#!/bin/sh
# oauth-curl.sh: the OAuth authorization code grant of a guidepub app with
# curl alone, curl playing the owner's browser: sign in, Allow every scope
# the app asks for, exchange the code with the PKCE verifier, and call the
# Portal API with the access token. docs/oauth.md walks it step by step;
# cmd/guidepub's TestOAuthCurlScript runs it against a real sidecar.
#
# Set, from what "guidepub app create" printed (--json: authorizeUrl,
# codeVerifier, clientSecret) or from guidepub dev's banner:
#   AUTHORIZE_URL  the authorize URL, with its code_challenge
#   VERIFIER       the code_verifier of that challenge
#   CLIENT_SECRET  the app's client secret (leave it unset for a public app)
#   OWNER          the owner who signs in and approves the app
#   PASSWORD       that owner's password (guidepub owner password)
# and, optionally, CLIENT_ID (by default the client_id of AUTHORIZE_URL).
#
#   AUTHORIZE_URL='http://127.0.0.1:8080/oauth/authorize?client_id=gpc_…' VERIFIER=… \
#     CLIENT_SECRET=gpcs_… OWNER=user-2002 PASSWORD='…' sh docs/oauth-curl.sh
#
# Standard output gets two lines: the token endpoint's answer (JSON, with
# access_token and refresh_token) and the Portal API's answer to
# POST /api/v1/integrations/test, {"appId":"<client id>"}. What it does is
# said on standard error. It exits 1 when a step fails, saying which and
# why, and 2 when a variable is missing.
set -eu

die() { printf 'oauth-curl.sh: %s\n' "$*" >&2; exit 1; }
step() { printf '%s\n' "$*" >&2; }
for v in AUTHORIZE_URL VERIFIER OWNER PASSWORD; do
  eval "val=\${$v:-}"
  [ -n "$val" ] || { printf 'oauth-curl.sh: set %s (see the top of this script)\n' "$v" >&2; exit 2; }
done
command -v curl >/dev/null || die "curl is not installed"

case $AUTHORIZE_URL in
  */oauth/authorize\?*) ;;
  *) die "AUTHORIZE_URL is not an authorize URL (…/oauth/authorize?…): $AUTHORIZE_URL" ;;
esac
BASE=${AUTHORIZE_URL%%/oauth/authorize\?*}
# The sign-in form's next: the authorize request to come back to, its path
# and query (the sidecar takes no other).
NEXT="/oauth/authorize?${AUTHORIZE_URL#*\?}"
if [ -z "${CLIENT_ID:-}" ]; then
  CLIENT_ID=$(printf '%s\n' "$AUTHORIZE_URL" | sed -n 's/.*[?&]client_id=\([^&]*\).*/\1/p')
fi

# The cookie jar keeps what the sign-in sets (guidepub_csrf, then
# guidepub_session; curl marks them #HttpOnly_ in the file and sends them).
JAR=$(mktemp)
trap 'rm -f "$JAR"' EXIT
browse() { curl -s -c "$JAR" -b "$JAR" "$@"; }
# field NAME prints the value of each hidden input or checkbox NAME of the
# page on standard input (the values read here need no HTML unescaping:
# CSRF tokens and scope names).
field() { sed -n "s/.*name=\"$1\" value=\"\([^\"]*\)\".*/\1/p"; }

# 1. Not signed in: the sign-in form, and its CSRF cookie in the jar.
CSRF=$(browse -G --data-urlencode "next=$NEXT" "$BASE/oauth/signin" | field csrf)
[ -n "$CSRF" ] || die "no sign-in form at $BASE/oauth/signin: is a guidepub sidecar or dev there?"

# 2. Sign in: a 303 back to next sets the session cookie; anything else is
# the form again (401 for a wrong password, 429 when throttled), with why.
page=$(browse -w '\n%{http_code}' --data-urlencode "csrf=$CSRF" --data-urlencode "next=$NEXT" \
  --data-urlencode "username=$OWNER" --data-urlencode "password=$PASSWORD" "$BASE/oauth/signin")
status=$(printf '%s\n' "$page" | tail -n 1)
if [ "$status" != 303 ]; then
  why=$(printf '%s\n' "$page" | sed -n 's/.*<p class="error" role="alert">\([^<]*\)<.*/\1/p')
  die "sign-in as $OWNER answered $status: ${why:-see the sidecar's log}"
fi
step "signed in as $OWNER"

# 3. Signed in, the authorize request shows the consent form: its CSRF
# token and one checkbox "grant" per scope the app asks for.
page=$(browse "$AUTHORIZE_URL")
CSRF=$(printf '%s\n' "$page" | field csrf)
GRANTS=$(printf '%s\n' "$page" | field grant)
[ -n "$CSRF" ] && [ -n "$GRANTS" ] || die "no consent form for $AUTHORIZE_URL: $(printf '%s\n' "$page" | sed 's/<[^>]*>//g' | grep . | head -n 3 | tr '\n' ' ')"

# 4. Allow, ticking every scope: decision=allow and one grant= per scope,
# posted to the authorize request itself. The answer redirects to the app's
# redirect URI with the code (or an error) in its query.
set -- --data-urlencode "csrf=$CSRF" -d decision=allow
for g in $GRANTS; do set -- "$@" --data-urlencode "grant=$g"; done
LOCATION=$(browse -o /dev/null -w '%{redirect_url}' "$@" "$BASE$NEXT")
CODE=$(printf '%s\n' "$LOCATION" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
[ -n "$CODE" ] || die "Allow did not send back a code: ${LOCATION:-no redirect}"
REDIRECT_URI=${LOCATION%%\?*}
step "allowed $(echo $GRANTS) for $CLIENT_ID; the code came back to $REDIRECT_URI"

# 5. The app's part: the code and the verifier for tokens (client
# authentication by HTTP Basic; a public app sends its client_id alone).
if [ -n "${CLIENT_SECRET:-}" ]; then
  set -- -u "$CLIENT_ID:$CLIENT_SECRET"
else
  set -- -d "client_id=$CLIENT_ID"
fi
TOKENS=$(curl -s "$@" -d grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER" "$BASE/oauth/token")
ACCESS_TOKEN=$(printf '%s\n' "$TOKENS" | sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
[ -n "$ACCESS_TOKEN" ] || die "the code exchange failed: $TOKENS"
printf '%s\n' "$TOKENS"

# 6. The Portal API, with the access token.
step "exchanged the code for tokens; calling the Portal API with the access token"
answer=$(curl -s -w '\n%{http_code}' -X POST -H "X-Svc-App-Id: $CLIENT_ID" -H "X-Svc-App-Token: $ACCESS_TOKEN" \
  "$BASE/api/v1/integrations/test")
status=$(printf '%s\n' "$answer" | tail -n 1)
answer=$(printf '%s\n' "$answer" | sed '$d')
[ "$status" = 200 ] || die "the Portal API answered $status: $answer"
printf '%s\n' "$answer"
