// Small DOM helpers: elements built with textContent (never innerHTML), time formatting,
// and a keyset pager.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs, svg) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class' || k === 'className') {
      if (svg) el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
      else el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    } else if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== undefined && dv !== null) el.dataset[dk] = dv;
    } else if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (!svg && (k === 'value' || k === 'checked' || k === 'selected' || k === 'disabled' || k === 'hidden' || k === 'open')) {
      el[k] = v;
    } else if (k === 'style') {
      throw new Error('h(): no style attribute under the page\'s CSP; set el.style.x from code');
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false || c === true) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** h('a', {href: '#/x', class: 'link'}, 'text', child, [more]) -> HTMLElement */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs && (attrs instanceof Node || typeof attrs !== 'object' || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  apply(el, attrs, false);
  append(el, children);
  return el;
}

/** s('svg', {viewBox: '0 0 10 10'}, s('path', {d: '...'})) -> SVGElement */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  if (attrs && (attrs instanceof Node || typeof attrs !== 'object' || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  apply(el, attrs, true);
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Epoch ms from a number, a numeric string or an ISO date; null when absent. */
export function toMs(v) {
  if (v === undefined || v === null || v === '' || v === 0) return null;
  if (typeof v === 'number') return v;
  if (/^\d+$/.test(String(v))) return Number(v);
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** "2026-12-06 07:55:59" in local time. */
export function absTime(v) {
  const ms = toMs(v);
  if (ms === null) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "12 s ago", "3 min ago", "in 5 s" */
export function relTime(v, now = Date.now()) {
  const ms = toMs(v);
  if (ms === null) return '';
  const diff = now - ms;
  const a = Math.abs(diff);
  let txt;
  if (a < 1000) return 'just now';
  if (a < 60e3) txt = `${Math.floor(a / 1000)} s`;
  else if (a < 3600e3) txt = `${Math.floor(a / 60e3)} min`;
  else if (a < 86400e3) txt = `${Math.floor(a / 3600e3)} h`;
  else txt = `${Math.floor(a / 86400e3)} d`;
  return diff >= 0 ? `${txt} ago` : `in ${txt}`;
}

/** "812 ms", "4.2 s", "3 min 12 s", "2 h 5 min", "3 d 4 h" */
export function duration(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '';
  ms = Math.max(0, Math.round(ms));
  if (ms < 1000) return `${ms} ms`;
  if (ms < 10e3) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 60e3) return `${Math.floor(ms / 1000)} s`;
  if (ms < 3600e3) {
    const m = Math.floor(ms / 60e3); const sec = Math.floor((ms % 60e3) / 1000);
    return sec ? `${m} min ${sec} s` : `${m} min`;
  }
  if (ms < 86400e3) {
    const hr = Math.floor(ms / 3600e3); const m = Math.floor((ms % 3600e3) / 60e3);
    return m ? `${hr} h ${m} min` : `${hr} h`;
  }
  const d = Math.floor(ms / 86400e3); const hr = Math.floor((ms % 86400e3) / 3600e3);
  return hr ? `${d} d ${hr} h` : `${d} d`;
}

/** A <time> element: relative text, absolute in its title. */
export function timeCell(v) {
  const ms = toMs(v);
  if (ms === null) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: new Date(ms).toISOString(), title: absTime(ms) }, relTime(ms));
}

export function fmtNum(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '—';
  return Number(n).toLocaleString('en-US');
}

/** Badge for a status: <span class="badge st-failed">FAILED</span> */
export function badge(status) {
  const st = String(status || 'unknown');
  return h('span', { class: `badge st-${st.toLowerCase()}` }, st);
}

/**
 * Keyset pager: `cursor` is the current page's cursor (null = first page); next(nextCursor)
 * moves on and remembers where it came from, prev() goes back.
 */
export class KeysetPager {
  constructor(cursor = null, stack = []) {
    this.cursor = cursor;
    this.stack = stack.slice();
  }
  get page() { return this.stack.length + 1; }
  get isFirst() { return this.cursor === null; }
  get hasPrev() { return this.stack.length > 0 || this.cursor !== null; }
  next(nextCursor) {
    if (!nextCursor) return false;
    this.stack.push(this.cursor);
    this.cursor = nextCursor;
    return true;
  }
  prev() {
    if (this.stack.length) this.cursor = this.stack.pop();
    else this.cursor = null;
    return true;
  }
  reset() { this.cursor = null; this.stack = []; }
}

/** A labelled control: <div class="field"><label for=id>Text</label>control</div> */
let fieldSeq = 0;
export function field(labelText, control, extraClass = '') {
  if (!control.id) control.id = `f${++fieldSeq}`;
  return h('div', { class: ['field', extraClass] }, h('label', { for: control.id }, labelText), control);
}

/** An action button that readers/workers see disabled (the click still sends the request). */
const ROLE_RANK = { reader: 0, worker: 1, operator: 2, admin: 3 };
export function canAct(me, needed = 'operator') {
  const role = (me && me.role) || 'admin';
  return (ROLE_RANK[role] ?? 0) >= (ROLE_RANK[needed] ?? 2);
}
export function actionButton(label, me, needed, onClick, attrs = {}) {
  const ok = canAct(me, needed);
  const b = h('button', { type: 'button', class: attrs.class || 'btn', ...attrs }, label);
  if (!ok) {
    b.disabled = true;
    b.title = `Needs the ${needed} role (you are ${me && me.role ? me.role : 'unknown'})`;
  }
  b.addEventListener('click', onClick);
  return b;
}

/** Empty-state / note row spanning a table. */
export function emptyRow(cols, text) {
  return h('tr', { class: 'empty' }, h('td', { colspan: String(cols) }, text));
}

// Calls `load` every `ms` after the previous call ended, skipping while the tab is hidden;
// the answer stops it (a page's cleanup).
export function repeat(ms, load) {
  let timer = null;
  let stopped = false;
  const tick = async () => {
    if (stopped) return;
    if (!document.hidden) await load();
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => { stopped = true; clearTimeout(timer); };
}
