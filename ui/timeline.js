// nodeflow execution timeline: one row per task attempt, bars on a shared time axis
// (queued: scheduled -> started, running: started -> ended or now), coloured by status.
// Rows are virtualized: only those in view (plus a margin) exist in the DOM.

const ROW = 28;
const OVERSCAN = 12;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

const ms = (v) => (typeof v === 'number' && v > 0 ? v : (typeof v === 'string' && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : null));

export function fmtDuration(d) {
  if (d === null || d === undefined || !Number.isFinite(d)) return '';
  if (d < 1000) return `${Math.round(d)} ms`;
  if (d < 60000) return `${(d / 1000).toFixed(d < 10000 ? 2 : 1)} s`;
  if (d < 3600000) return `${Math.floor(d / 60000)} min ${Math.round((d % 60000) / 1000)} s`;
  return `${Math.floor(d / 3600000)} h ${Math.round((d % 3600000) / 60000)} min`;
}

function niceStep(span, target) {
  const raw = span / Math.max(1, target);
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000,
    120000, 300000, 600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];
  for (const s of steps) if (s >= raw) return s;
  return Math.ceil(raw / 86400000) * 86400000;
}

function tickLabel(off, step) {
  if (step < 1000) return `${off} ms`;
  if (step < 60000) return `${off / 1000} s`;
  if (step < 3600000) return `${Math.round(off / 60000 * 10) / 10} min`;
  return `${Math.round(off / 3600000 * 10) / 10} h`;
}

const ACTIVE = new Set(['IN_PROGRESS', 'SCHEDULED']);

/**
 * timeline(tasks, {start, end, onSelect}) -> {el, update(tasks, {start, end}), tick(), destroy()}
 * tasks: the Workflow's tasks (every attempt); start/end: the workflow's times (end null while it runs).
 */
export function timeline(tasks, { start = null, end = null, onSelect = null } = {}) {
  const root = el('div', 'tl');
  const head = el('div', 'tl-head');
  const headLabel = el('div', 'tl-cols');
  for (const [c, t] of [['tl-c-ref', 'Task'], ['tl-c-att', 'Attempt'], ['tl-c-it', 'Iter.'], ['tl-c-worker', 'Worker']]) {
    headLabel.appendChild(el('span', c, t));
  }
  const axis = el('div', 'tl-axis');
  axis.setAttribute('aria-hidden', 'true');
  head.append(headLabel, axis);
  const legend = el('div', 'tl-legend');
  for (const [c, t] of [['tl-q', 'queued'], ['tl-run st-in_progress', 'running'], ['tl-run st-completed', 'completed'],
    ['tl-run st-failed', 'failed'], ['tl-run st-timed_out', 'timed out'], ['tl-run st-canceled', 'canceled']]) {
    const k = el('span', 'tl-key');
    k.append(el('span', `tl-swatch ${c}`), t);
    legend.appendChild(k);
  }
  const scroll = el('div', 'tl-scroll');
  scroll.tabIndex = 0;
  scroll.setAttribute('role', 'list');
  scroll.setAttribute('aria-label', 'Task attempts on a time axis');
  const spacer = el('div', 'tl-spacer');
  scroll.appendChild(spacer);
  const count = el('p', 'tl-count');
  root.append(legend, head, scroll, count);

  let rows = [];
  let t0 = 0;
  let t1 = 1;
  let wfEnd = end;
  let rendered = new Map();   // index -> row element
  let raf = 0;

  function prepare(list, s, e) {
    wfEnd = e;
    // an attempt is "retried" when a later attempt of the same ref and iteration exists
    const last = new Map();
    for (const t of list) {
      const k = `${t.referenceTaskName}\u0000${t.iteration || 0}`;
      const r = t.retryCount || 0;
      if (!last.has(k) || last.get(k) < r) last.set(k, r);
    }
    rows = list.slice().sort((a, b) => ((ms(a.scheduledTime) || ms(a.startTime) || 0) - (ms(b.scheduledTime) || ms(b.startTime) || 0)) || ((a.seq || 0) - (b.seq || 0)));
    for (const t of rows) {
      const k = `${t.referenceTaskName}\u0000${t.iteration || 0}`;
      t._retried = !!t.retried || (t.retryCount || 0) < last.get(k);
    }
    let lo = ms(s);
    let hi = ms(e);
    for (const t of rows) {
      const a = ms(t.scheduledTime) || ms(t.startTime);
      if (a && (lo === null || a < lo)) lo = a;
      const b = ms(t.endTime) || ms(t.startTime) || a;
      if (b && (hi === null || b > hi)) hi = b;
    }
    const now = Date.now();
    if (!ms(e)) hi = Math.max(hi || now, now);
    t0 = lo || now;
    t1 = Math.max(hi || t0 + 1, t0 + 1);
    spacer.style.height = `${rows.length * ROW}px`;
    count.textContent = `${rows.length.toLocaleString()} attempt${rows.length === 1 ? '' : 's'} · ${fmtDuration(t1 - t0)}`;
    drawAxis();
  }

  function pct(t) { return ((t - t0) / (t1 - t0)) * 100; }

  function drawAxis() {
    axis.textContent = '';
    const span = t1 - t0;
    const step = niceStep(span, 8);
    for (let off = 0; off <= span; off += step) {
      const tk = el('span', 'tl-tick', tickLabel(off, step));
      tk.style.left = `${(off / span) * 100}%`;
      axis.appendChild(tk);
    }
  }

  function rowEl(t, i) {
    const r = el('div', 'tl-row');
    r.setAttribute('role', 'listitem');
    r.style.top = `${i * ROW}px`;
    const status = String(t.status || '');
    if (t._retried) r.classList.add('retried');
    if (status === 'TIMED_OUT') r.classList.add('timedout');
    const cols = el('div', 'tl-cols');
    const ref = el('button', 'tl-c-ref tl-ref');
    ref.type = 'button';
    ref.append(el('span', 'tl-refname', t.referenceTaskName), el('span', 'tl-type', t.taskType));
    ref.addEventListener('click', () => onSelect && onSelect(t));
    const att = el('span', 'tl-c-att');
    att.textContent = `#${(t.retryCount || 0) + 1}`;
    if (status === 'TIMED_OUT') {
      const f = el('span', 'tl-flag tl-flag-to', t._retried ? '◷ timed out ↻' : '◷ timed out');
      f.title = t._retried ? 'timed out, then retried' : 'timed out';
      att.appendChild(f);
    } else if (t._retried) {
      const f = el('span', 'tl-flag tl-flag-retry', '↻ retried');
      f.title = `${status.toLowerCase()}, then retried`;
      att.appendChild(f);
    }
    cols.append(ref, att, el('span', 'tl-c-it', t.iteration ? String(t.iteration) : ''), el('span', 'tl-c-worker', t.workerId || ''));
    const lane = el('div', 'tl-lane');
    const sch = ms(t.scheduledTime);
    const st = ms(t.startTime);
    const en = ms(t.endTime);
    const now = Date.now();
    const stopAt = en || (ACTIVE.has(status) && !ms(wfEnd) ? now : (ms(t.updateTime) || st || sch));
    if (sch && (st || stopAt)) {
      const qEnd = st || stopAt;
      if (qEnd > sch) {
        const q = el('span', 'tl-q');
        q.style.left = `${pct(sch)}%`;
        q.style.width = `${Math.max(0, pct(qEnd) - pct(sch))}%`;
        lane.appendChild(q);
      }
    }
    if (st) {
      const b = el('span', `tl-run st-${status.toLowerCase()}`);
      b.style.left = `${pct(st)}%`;
      b.style.width = `${Math.max(0, pct(stopAt || st) - pct(st))}%`;
      lane.appendChild(b);
    } else if (sch) {
      const dot = el('span', `tl-mark st-${status.toLowerCase()}`);
      dot.style.left = `${pct(sch)}%`;
      lane.appendChild(dot);
    }
    const parts = [`${t.referenceTaskName} (${t.taskType}) attempt ${(t.retryCount || 0) + 1}`, `status ${status}`];
    if (t.iteration) parts.push(`iteration ${t.iteration}`);
    if (sch && st) parts.push(`queued ${fmtDuration(st - sch)}`);
    if (st) parts.push(`ran ${fmtDuration((en || now) - st)}${en ? '' : ' so far'}`);
    if (t.workerId) parts.push(`worker ${t.workerId}`);
    if (t.reasonForIncompletion) parts.push(`reason: ${String(t.reasonForIncompletion).slice(0, 300)}`);
    lane.title = parts.join('\n');
    r.append(cols, lane);
    return r;
  }

  function render(force) {
    raf = 0;
    const h = scroll.clientHeight || 500;
    const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((scroll.scrollTop + h) / ROW) + OVERSCAN);
    const keep = new Map();
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      let r = force ? null : rendered.get(i);
      if (r) { rendered.delete(i); } else { r = rowEl(rows[i], i); frag.appendChild(r); }
      keep.set(i, r);
    }
    for (const r of rendered.values()) r.remove();
    spacer.appendChild(frag);
    rendered = keep;
  }

  scroll.addEventListener('scroll', () => { if (!raf) raf = requestAnimationFrame(() => render(false)); }, { passive: true });

  prepare(tasks || [], start, end);
  // first paint once attached (clientHeight known); a frame later is fine
  requestAnimationFrame(() => render(true));
  render(true);

  let tickTimer = setInterval(() => {
    if (!root.isConnected || root.offsetParent === null || ms(wfEnd)) return;
    if (!rows.some((t) => ACTIVE.has(String(t.status)))) return;
    prepare(rows, start, wfEnd);
    render(true);
  }, 1000);

  return {
    el: root,
    update(list, { start: s = start, end: e = null } = {}) {
      start = s;
      prepare(list || [], s, e);
      render(true);
    },
    refresh() { render(true); },
    destroy() { clearInterval(tickTimer); tickTimer = null; if (raf) cancelAnimationFrame(raf); },
  };
}

export default timeline;
