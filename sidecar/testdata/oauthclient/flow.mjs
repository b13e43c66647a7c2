// Drives guidepub's authorization server with oauth4webapi, a strict,
// spec-conformant OAuth 2.0 client: discovery (RFC 8414), authorization
// with PKCE and sign-in and consent, the code exchange, the Portal API, a
// refresh, a revocation (RFC 7009), and the Portal API's RFC 6750
// challenges (a revoked token, a token without the scope a request
// needs) read by the client's own parser. The sidecar's tests run it with node
// (sidecar/oauth_client_test.go); every step that a strict client refuses
// fails it with a message on standard error and exit status 1.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET,
// REDIRECT_URI, OWNER, PASSWORD, SCOPE (what the Portal API needs), and
// NARROW_SCOPE (another scope of the app, without SCOPE's).
import * as oauth from 'oauth4webapi';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const issuer = new URL(env('ISSUER'));
const client = { client_id: env('CLIENT_ID') };
const clientAuth = oauth.ClientSecretBasic(env('CLIENT_SECRET'));
const redirectUri = env('REDIRECT_URI');
const scope = env('SCOPE');
// The test server speaks plain HTTP on loopback.
const insecure = { [oauth.allowInsecureRequests]: true };

const steps = [];
const step = (name, detail = '') => steps.push(detail ? `${name}: ${detail}` : name);
const fail = (msg) => {
  throw new Error(msg);
};

// A browser: cookies kept by name, redirects shown rather than followed.
const cookies = new Map();
async function browse(url, init = {}) {
  const headers = new Headers(init.headers);
  if (cookies.size) headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    cookies.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return res;
}

const unescapeHTML = (s) =>
  s.replaceAll('&amp;', '&').replaceAll('&#43;', '+').replaceAll('&#34;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>');

// The hidden fields and the action of the page's form.
function pageForm(html) {
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([a-z]+)" value="([^"]*)">/g)) fields.set(m[1], unescapeHTML(m[2]));
  const action = html.match(/<form method="post" action="([^"]*)">/);
  if (!action) fail(`no form in the page:\n${html}`);
  return { fields, action: new URL(unescapeHTML(action[1]), issuer) };
}

// authorize runs the owner's part in the browser and returns the URL the
// browser is sent back to.
async function authorize(url, grant = scope) {
  let res = await browse(url);
  if (res.status === 303 && new URL(res.headers.get('location'), issuer).pathname === '/oauth/signin') {
    res = await browse(new URL(res.headers.get('location'), issuer));
    const { fields, action } = pageForm(await res.text());
    fields.set('username', env('OWNER'));
    fields.set('password', env('PASSWORD'));
    res = await browse(action, { method: 'POST', body: fields });
    if (res.status !== 303) fail(`sign-in answered ${res.status}`);
    res = await browse(new URL(res.headers.get('location'), issuer));
  }
  if (res.status !== 200) fail(`consent page answered ${res.status}`);
  const { fields, action } = pageForm(await res.text());
  fields.set('decision', 'allow');
  for (const s of grant.split(' ')) fields.append('grant', s);
  res = await browse(action, { method: 'POST', body: fields });
  if (res.status !== 303) fail(`consent answered ${res.status}`);
  return new URL(res.headers.get('location'));
}

async function portal(accessToken) {
  const res = await fetch(new URL('/api/v1/integrations/test', issuer), {
    method: 'POST',
    headers: { 'X-Svc-App-Id': client.client_id, 'X-Svc-App-Token': accessToken },
  });
  return { status: res.status, body: await res.text() };
}

// grant runs one authorization (no state) for scope, and the code
// exchange, and returns the tokens.
async function grant(as, grantScope) {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('scope', grantScope);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  const params = oauth.validateAuthResponse(as, client, await authorize(url, grantScope), oauth.expectNoState);
  const res = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, insecure);
  return oauth.processAuthorizationCodeResponse(as, client, res);
}

// expectChallenge calls the Portal API with accessToken as a bearer token
// (oauth4webapi's protectedResourceRequest) and checks that it is refused
// with status and an RFC 6750 Bearer challenge of error (and of
// wantScope, when given), as the client parses it.
async function expectChallenge(accessToken, status, error, wantScope) {
  const url = new URL('/api/v1/guides/gNONE/events/ready/object', issuer);
  try {
    await oauth.protectedResourceRequest(accessToken, 'GET', url, new Headers(), null, insecure);
    fail(`Portal API answered without a challenge, want ${status} ${error}`);
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err;
    const [c] = err.cause;
    if (err.response.status !== status || c?.scheme !== 'bearer' || c.parameters.error !== error ||
      (wantScope && c.parameters.scope !== wantScope)) {
      fail(`Portal API: ${err.response.status} ${JSON.stringify(err.cause)}, want ${status} and a Bearer challenge of ${error}`);
    }
    step('challenge', `${status} ${error}`);
  }
}

async function main() {
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  step('discovery', as.token_endpoint);

  // Once without state (PKCE is required, state optional), once with a
  // short one: each must come back exactly as sent.
  let tokens;
  for (const state of [undefined, 'x1']) {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('scope', scope);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    if (state) url.searchParams.set('state', state);
    const callback = await authorize(url);
    const params = oauth.validateAuthResponse(as, client, callback, state ?? oauth.expectNoState);
    step('authorization', state ? `state ${state}` : 'no state');
    const res = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, insecure);
    tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
    if (!tokens.refresh_token) fail('no refresh token');
    step('code exchange', `scope ${tokens.scope}`);
  }

  let p = await portal(tokens.access_token);
  if (p.status !== 200 || JSON.parse(p.body).appId !== client.client_id) fail(`Portal API: ${p.status} ${p.body}`);
  step('portal', p.status);

  const res = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, insecure);
  const fresh = await oauth.processRefreshTokenResponse(as, client, res);
  if (fresh.access_token === tokens.access_token || fresh.refresh_token === tokens.refresh_token) fail('refresh did not rotate the tokens');
  p = await portal(tokens.access_token);
  if (p.status !== 401) fail(`Portal API with the access token before the refresh: ${p.status}`);
  p = await portal(fresh.access_token);
  if (p.status !== 200) fail(`Portal API after the refresh: ${p.status} ${p.body}`);
  step('refresh');

  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, fresh.access_token, insecure));
  p = await portal(fresh.access_token);
  if (p.status !== 401) fail(`Portal API with a revoked access token: ${p.status}`);
  step('revocation');
  await expectChallenge(fresh.access_token, 401, 'invalid_token');

  // A token without the scope the Portal API needs.
  const narrow = await grant(as, env('NARROW_SCOPE'));
  await expectChallenge(narrow.access_token, 403, 'insufficient_scope', scope);

  // A refused request reaches the client as an error it can read.
  const reused = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, insecure);
  try {
    await oauth.processRefreshTokenResponse(as, client, reused);
    fail('a spent refresh token was accepted');
  } catch (err) {
    if (!(err instanceof oauth.ResponseBodyError) || err.error !== 'invalid_grant') throw err;
  }
  step('reused refresh token', 'invalid_grant');
}

main().then(
  () => {
    console.log(JSON.stringify({ ok: true, steps }));
  },
  (err) => {
    console.error(`oauth4webapi flow failed after ${JSON.stringify(steps)}: ${err?.stack ?? err}`);
    if (err?.cause) console.error('cause:', err.cause);
    process.exit(1);
  },
);
