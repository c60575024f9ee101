// nodeflow HTTP API client: JSON requests with the session token, and SSE over fetch().

const TOKEN_KEY = 'nodeflow.token';

export class ApiError extends Error {
  constructor(message, status, field = null, body = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.field = field;
    this.body = body;
  }
}

export function setToken(t) {
  try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* storage off: keep in memory */ }
  memoryToken = t;
}
export function getToken() {
  try { return sessionStorage.getItem(TOKEN_KEY) || memoryToken; } catch { return memoryToken; }
}
export function clearToken() {
  memoryToken = null;
  try { sessionStorage.removeItem(TOKEN_KEY); } catch { /* ignore */ }
}
let memoryToken = null;

// Routes whose 401 means "wrong credentials" and must not send the app to the login page.
const OPEN_ROUTES = new Set(['/api/login', '/api/token']);

function buildUrl(path, query) {
  if (!query) return path;
  const qs = new URLSearchParams();
  const entries = query instanceof URLSearchParams ? query.entries() : Object.entries(query);
  for (const [k, v] of entries) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => qs.append(k, String(x)));
    else qs.append(k, String(v));
  }
  const s = qs.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

function headers(extra = {}) {
  const h = { Accept: 'application/json', ...extra };
  const t = getToken();
  if (t) h['X-Authorization'] = t;
  return h;
}

function unauthorized(path) {
  if (OPEN_ROUTES.has(path.split('?')[0])) return;
  window.dispatchEvent(new CustomEvent('nodeflow:unauthorized'));
}

async function errorFrom(res, path) {
  let body = null;
  let message = `${res.status} ${res.statusText || 'error'}`;
  let field = null;
  try {
    const text = await res.text();
    try {
      body = JSON.parse(text);
      if (body && typeof body.message === 'string' && body.message) message = body.message;
      const ve = body && Array.isArray(body.validationErrors) ? body.validationErrors[0] : null;
      if (ve && ve.path) field = ve.path;
    } catch {
      if (text) message = text.slice(0, 300);
    }
  } catch { /* body unreadable */ }
  if (res.status === 401) unauthorized(path);
  return new ApiError(message, res.status, field, body);
}

async function request(method, path, { query, body, requestId } = {}) {
  const url = buildUrl(path, query);
  const extra = {};
  if (body !== undefined) extra['Content-Type'] = 'application/json';
  if (requestId) extra['X-Request-Id'] = requestId;
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: headers(extra),
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (e) {
    throw new ApiError(`cannot reach the node (${e.message || e})`, 0);
  }
  if (res.status >= 400) throw await errorFrom(res, path);
  if (res.status === 204) return null;
  const type = res.headers.get('content-type') || '';
  if (type.includes('json')) {
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  }
  return res.text();
}

const TERMINAL = new Set(['WORKFLOW_COMPLETED', 'WORKFLOW_FAILED', 'WORKFLOW_TIMED_OUT', 'WORKFLOW_TERMINATED']);

// Server-Sent Events read through fetch() so the token header can be sent. Resumes after a
// dropped connection with Last-Event-ID; onEnd when the server ends the history (or 204).
function stream(path, onEvent, { after, onError, onEnd } = {}) {
  let closed = false;
  let controller = null;
  let lastId = after !== undefined && after !== null ? String(after) : null;
  let lastType = null;
  let retryMs = 500;
  let timer = null;

  const finish = () => {
    if (closed) return;
    closed = true;
    if (onEnd) onEnd();
  };

  const dispatch = (ev) => {
    if (ev.id !== null) lastId = ev.id;
    if (ev.data === null && ev.event === null) return;
    let data = ev.data;
    if (data !== null) { try { data = JSON.parse(data); } catch { /* leave as text */ } }
    lastType = ev.event || (data && data.type) || null;
    try { onEvent({ id: ev.id !== null ? ev.id : lastId, event: ev.event || 'message', data }); } catch (e) { console.error(e); }
  };

  const schedule = (err) => {
    if (closed) return;
    if (onError && err) { try { onError(err); } catch { /* ignore */ } }
    timer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  };

  async function connect() {
    if (closed) return;
    controller = new AbortController();
    const h = headers({ Accept: 'text/event-stream' });
    if (lastId !== null) h['Last-Event-ID'] = lastId;
    const url = lastId === null && after !== undefined && after !== null ? buildUrl(path, { after }) : path;
    let res;
    try {
      res = await fetch(url, { headers: h, signal: controller.signal, cache: 'no-store' });
    } catch (e) {
      if (closed) return;
      return schedule(new ApiError(`stream dropped (${e.message || e})`, 0));
    }
    if (res.status === 204) return finish();
    if (res.status >= 400) {
      const err = await errorFrom(res, path);
      // 4xx other than 408/429 will not get better by retrying
      if (res.status < 500 && res.status !== 408 && res.status !== 429) {
        closed = true;
        if (onError) onError(err);
        return;
      }
      return schedule(err);
    }
    retryMs = 500;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let cur = { id: null, event: null, data: null };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl;
        while ((nl = buf.search(/\r\n|\n|\r/)) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1));
          if (line === '') {
            if (cur.data !== null || cur.event !== null) dispatch(cur);
            else if (cur.id !== null) lastId = cur.id;
            cur = { id: null, event: null, data: null };
            continue;
          }
          if (line.startsWith(':')) continue;
          const c = line.indexOf(':');
          const field = c < 0 ? line : line.slice(0, c);
          let val = c < 0 ? '' : line.slice(c + 1);
          if (val.startsWith(' ')) val = val.slice(1);
          if (field === 'data') cur.data = cur.data === null ? val : `${cur.data}\n${val}`;
          else if (field === 'event') cur.event = val;
          else if (field === 'id') cur.id = val;
          else if (field === 'retry' && /^\d+$/.test(val)) retryMs = Number(val);
        }
      }
    } catch (e) {
      if (closed) return;
      return schedule(new ApiError(`stream dropped (${e.message || e})`, 0));
    }
    if (closed) return;
    if (lastType && TERMINAL.has(lastType)) return finish();
    // ended without the terminal event: ask again from the last id (a 204 then ends it)
    schedule(null);
  }

  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (controller) controller.abort();
    },
  };
}

export const api = {
  get: (path, query) => request('GET', path, { query }),
  post: (path, body, { requestId } = {}) => request('POST', path, { body, requestId }),
  put: (path, body, { requestId } = {}) => request('PUT', path, { body, requestId }),
  del: (path, query, { requestId } = {}) => request('DELETE', path, { query, requestId }),
  stream,
};

export default api;
