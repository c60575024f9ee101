// nodeflow web UI shell: hash routing, the signed-in user, toasts and the confirmation dialog.
import { api, ApiError, getToken, clearToken } from './api.js';

function sessionGet(k) { try { return sessionStorage.getItem(k); } catch { return null; } }
function sessionDel(k) { try { sessionStorage.removeItem(k); } catch { /* ignore */ } }
import { h, clear } from './dom.js';

const ROUTES = [
  { re: /^\/login$/, page: './pages/login.js', nav: null, open: true },
  { re: /^\/executions\/([^/]+)$/, page: './pages/execution.js', nav: 'executions', keys: ['id'] },
  { re: /^\/executions$/, page: './pages/executions.js', nav: 'executions' },
  { re: /^\/definitions\/([^/]+)\/([^/]+)$/, page: './pages/definitions.js', nav: 'definitions', keys: ['name', 'version'] },
  { re: /^\/definitions\/([^/]+)$/, page: './pages/definitions.js', nav: 'definitions', keys: ['name'] },
  { re: /^\/definitions$/, page: './pages/definitions.js', nav: 'definitions' },
  { re: /^\/queues$/, page: './pages/queues.js', nav: 'queues' },
  { re: /^\/deadletters$/, page: './pages/deadletters.js', nav: 'deadletters' },
  { re: /^\/cluster$/, page: './pages/cluster.js', nav: 'cluster' },
  { re: /^\/metrics$/, page: './pages/metrics.js', nav: 'metrics' },
];

const pageRoot = document.getElementById('page');
const toastRegion = document.getElementById('toasts');
const dialog = document.getElementById('confirm-dialog');

let me = null; // answer of GET /api/me
let cleanup = null;
let renderSeq = 0;

// ---------------------------------------------------------------- toasts

function toast(message, kind = 'info') {
  const t = h('div', { class: `toast toast-${kind}` },
    h('span', { class: 'toast-text' }, String(message)),
    h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', title: 'Dismiss', onclick: () => t.remove() }));
  toastRegion.appendChild(t);
  while (toastRegion.children.length > 5) toastRegion.firstChild.remove();
  setTimeout(() => t.remove(), kind === 'error' ? 10000 : 5000);
}

// ---------------------------------------------------------------- confirm dialog

let confirmResolve = null;
function confirmDialog(message, { confirmLabel, title } = {}) {
  if (confirmResolve) { confirmResolve(false); confirmResolve = null; }
  const heading = title || (confirmLabel ? (/[?.!]$/.test(confirmLabel) ? confirmLabel : `${confirmLabel}?`) : 'Please confirm');
  document.getElementById('confirm-title').textContent = heading;
  document.getElementById('confirm-message').textContent = String(message);
  dialog.returnValue = '';
  return new Promise((resolve) => {
    confirmResolve = resolve;
    if (typeof dialog.showModal === 'function') dialog.showModal();
    else dialog.setAttribute('open', '');
    document.getElementById('confirm-cancel').focus();
  });
}
dialog.addEventListener('close', () => {
  const r = confirmResolve;
  confirmResolve = null;
  if (r) r(dialog.returnValue === 'confirm');
});

// ---------------------------------------------------------------- identity

function showWho() {
  const who = document.getElementById('who');
  if (me && me.auth) {
    document.getElementById('who-subject').textContent = me.subject || '';
    document.getElementById('who-role').textContent = me.role || 'role unknown';
    who.hidden = false;
  } else if (me && me.auth === false) {
    document.getElementById('who-subject').textContent = 'auth off';
    document.getElementById('who-role').textContent = me.role || 'admin';
    who.hidden = false;
    document.getElementById('sign-out').hidden = true;
    return;
  } else {
    who.hidden = true;
  }
  document.getElementById('sign-out').hidden = false;
}

async function loadMe() {
  try {
    me = await api.get('/api/me');
    if (me && me.auth === undefined) me.auth = true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      // an older node without /api/me: auth off, unless we signed in (then who is unknown)
      me = getToken()
        ? { auth: true, subject: sessionGet('nodeflow.subject') || '', role: undefined }
        : { auth: false, role: 'admin' };
    } else if (e instanceof ApiError && e.status === 401) {
      me = null;
    } else {
      me = null;
      throw e;
    }
  }
  showWho();
  return me;
}

async function signOut() {
  clearToken();
  sessionDel('nodeflow.subject');
  me = null;
  showWho();
  navigate('#/login');
}
document.getElementById('sign-out').addEventListener('click', signOut);

window.addEventListener('nodeflow:unauthorized', () => {
  if (parseHash().path === '/login') return;
  clearToken();
  me = null;
  showWho();
  navigate('#/login');
});

// ---------------------------------------------------------------- routing

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/executions';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  return { path: path.replace(/\/+$/, '') || '/executions', query };
}

function navigate(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function setNav(key) {
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === key) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function runCleanup() {
  if (cleanup) {
    try { cleanup(); } catch (e) { console.error(e); }
    cleanup = null;
  }
}

async function render() {
  const seq = ++renderSeq;
  const { path, query } = parseHash();
  let route = null; let m = null;
  for (const r of ROUTES) { m = path.match(r.re); if (m) { route = r; break; } }
  runCleanup();
  if (!route) {
    navigate('#/executions');
    return;
  }
  if (!route.open && !me) {
    try { await loadMe(); } catch (e) {
      if (seq !== renderSeq) return;
      showError(`Cannot reach the node: ${e.message}`);
      return;
    }
    if (seq !== renderSeq) return;
    if (!me) { navigate('#/login'); return; }
  }
  const params = { query };
  (route.keys || []).forEach((k, i) => { params[k] = decodeURIComponent(m[i + 1]); });
  setNav(route.nav);
  document.body.classList.toggle('is-login', route.page === './pages/login.js');

  let mod;
  try {
    mod = await import(route.page);
  } catch (e) {
    console.error(e);
    if (seq !== renderSeq) return;
    showError(route.page.endsWith('execution.js')
      ? 'The execution page is not available in this build.'
      : `Cannot load this page: ${e.message}`);
    return;
  }
  if (seq !== renderSeq) return;
  const page = mod.default;
  const main = h('main', { class: 'page', 'aria-live': 'off' });
  clear(pageRoot).appendChild(main);
  document.title = page.title ? `${page.title} · nodeflow` : 'nodeflow';
  const ctx = { api, me, navigate, toast, confirm: confirmDialog, setMe: (v) => { me = v; showWho(); }, loadMe };
  try {
    const c = await page.mount(main, params, ctx);
    if (seq !== renderSeq) { if (typeof c === 'function') c(); return; }
    cleanup = typeof c === 'function' ? c : null;
  } catch (e) {
    if (seq !== renderSeq) return;
    if (e instanceof ApiError && e.status === 401) return; // the login page takes over
    console.error(e);
    main.appendChild(h('div', { class: 'notice notice-error', role: 'alert' }, `This page failed: ${e.message}`));
  }
}

function showError(text) {
  clear(pageRoot).appendChild(h('main', { class: 'page' },
    h('div', { class: 'notice notice-error', role: 'alert' }, text)));
}

// "Skip to content" must not change the hash (the router owns it)
document.querySelector('.skip-link').addEventListener('click', (ev) => {
  ev.preventDefault();
  const target = pageRoot.querySelector('h1') || pageRoot;
  if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
  target.focus();
});

window.addEventListener('hashchange', render);
if (!location.hash) history.replaceState(null, '', '#/executions');
render();
