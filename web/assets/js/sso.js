// Single sign-on: when the server has an OpenID Connect provider and a public client for the
// explorer (GET /auth/config), the header offers "Sign in". Sign-in is the authorization code
// flow with PKCE (S256), state and nonce: the page goes to the provider's authorization
// endpoint, comes back with ?code=…&state=…, removes them from the address at once, and
// exchanges the code at the token endpoint (a public client: no secret). The token is kept in
// sessionStorage only (this tab, gone when it closes; never localStorage, never the address)
// and sent as "Authorization: Bearer <token>" like an API key (api.js's auth).
//
// Which token: the access token when it is a JWT whose aud includes the server's audience (a
// provider that issues JWT access tokens for the API: Keycloak, Okta, Auth0 with audience,
// Entra with an API scope), else the ID token (its aud is the client ID, so the server's
// -oidc-audience must then be the client ID).
import { auth } from './api.js';
import { h, replace } from './dom.js';

const PENDING = 'catalogue.oidc.pending';
const SESSION = 'catalogue.oidc.session';

function b64url(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString() {
  return b64url(crypto.getRandomValues(new Uint8Array(32)));
}

// claimsOf decodes a JWT's payload (not verified: the server verifies; the page only reads
// the name, aud, exp and nonce it shows or compares).
export function claimsOf(jwt) {
  try {
    const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(part + '='.repeat((4 - (part.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

const audiences = (c) => (Array.isArray(c?.aud) ? c.aud : c?.aud ? [c.aud] : []);

// chooseToken returns the token to send: see the file's comment.
export function chooseToken(tokens, audience) {
  const access = tokens.access_token && claimsOf(tokens.access_token);
  if (access && audiences(access).includes(audience)) return tokens.access_token;
  return tokens.id_token || '';
}

let config = null;

async function loadConfig() {
  if (config) return config;
  try {
    const res = await fetch('/auth/config', { headers: { Accept: 'application/json' } });
    config = res.ok ? await res.json() : {};
  } catch {
    config = {};
  }
  return config;
}

function redirectURI() {
  return location.origin + location.pathname;
}

// session returns who is signed in ({name, exp}), or null; an expired session is ended.
export function session() {
  let s = null;
  try {
    s = JSON.parse(sessionStorage.getItem(SESSION) || 'null');
  } catch {
    s = null;
  }
  if (s && s.exp * 1000 <= Date.now()) {
    signOut();
    return null;
  }
  return s;
}

export function signOut() {
  if (sessionStorage.getItem(SESSION) !== null) auth.reset();
  sessionStorage.removeItem(SESSION);
  document.dispatchEvent(new CustomEvent('catalogue:signin'));
}

export async function signIn() {
  const c = await loadConfig();
  if (!c.clientId) return;
  if (!globalThis.crypto?.subtle) throw new Error('Sign-in needs a secure page (https, or http on localhost).');
  const verifier = randomString();
  const state = randomString();
  const nonce = randomString();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, nonce, hash: location.hash }));
  const u = new URL(c.authorizationEndpoint);
  u.search = new URLSearchParams({
    response_type: 'code', client_id: c.clientId, redirect_uri: redirectURI(), scope: c.scopes.join(' '),
    state, nonce, code_challenge: b64url(digest), code_challenge_method: 'S256', audience: c.audience,
  }).toString();
  location.assign(u.toString());
}

// complete finishes a sign-in when the page is the provider's redirect back: it checks the
// state, exchanges the code, checks the ID token's nonce and keeps the token. It returns an
// error message, or ''.
async function complete() {
  const params = new URLSearchParams(location.search);
  if (!params.has('state') || !(params.has('code') || params.has('error'))) return '';
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  // The code leaves the address (and history) before anything else happens.
  history.replaceState(null, '', redirectURI() + (pending?.hash || ''));
  if (!pending || params.get('state') !== pending.state) return 'Sign-in failed: the answer does not match this tab’s request.';
  if (params.has('error')) return `Sign-in failed: ${params.get('error')}.`;
  const c = await loadConfig();
  let tokens;
  try {
    const res = await fetch(c.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code: params.get('code'), redirect_uri: redirectURI(),
        client_id: c.clientId, code_verifier: pending.verifier,
      }),
    });
    tokens = await res.json();
    if (!res.ok) return `Sign-in failed: ${tokens?.error || res.status}.`;
  } catch {
    return 'Sign-in failed: the identity provider did not answer.';
  }
  const id = tokens.id_token ? claimsOf(tokens.id_token) : null;
  if (id && id.nonce !== pending.nonce) return 'Sign-in failed: the ID token was not issued for this request.';
  const token = chooseToken(tokens, c.audience);
  const claims = claimsOf(token);
  if (!claims) return 'Sign-in failed: the identity provider returned no usable token.';
  auth.header = `Bearer ${token}`;
  sessionStorage.setItem(SESSION, JSON.stringify({
    name: claims.preferred_username || id?.preferred_username || claims.email || claims.sub, exp: claims.exp,
  }));
  return '';
}

let expiry = 0;

function render(root, c, message) {
  clearTimeout(expiry);
  const s = session();
  if (s) {
    expiry = setTimeout(() => render(root, c, 'Your sign-in expired.'), Math.max(0, s.exp * 1000 - Date.now()));
    replace(root,
      h('span', { class: 'signin-who', dataset: { testid: 'signed-in' } }, 'Signed in as ', h('strong', {}, s.name)),
      h('button', { type: 'button', class: 'signin-button', onclick: () => signOut() }, 'Sign out'));
  } else {
    replace(root,
      message ? h('span', { class: 'signin-error', role: 'alert' }, message) : null,
      h('button', { type: 'button', class: 'signin-button', dataset: { testid: 'sign-in' }, onclick: () => signIn().catch((e) => render(root, c, e.message)) }, 'Sign in'));
  }
  root.hidden = false;
}

// mount shows the sign-in control in root when the server offers sign-in (else nothing, and
// API keys work as before). It resolves once a sign-in coming back has completed, so that the
// first view already sends the token.
export async function mount(root) {
  const c = await loadConfig();
  if (!c.clientId) {
    if (sessionStorage.getItem(SESSION) !== null) signOut();
    return;
  }
  const message = await complete();
  render(root, c, message);
  document.addEventListener('catalogue:signin', () => render(root, c, ''));
}
