// Executions: filtered, keyset-paged list with live status counts.
import { h, clear, field, toMs, absTime, relTime, duration, badge, fmtNum, KeysetPager, emptyRow } from '../dom.js';

const STATUSES = ['RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'TIMED_OUT', 'TERMINATED'];
const PAGE_SIZE = 50;
const REFRESH_MS = 5000;
const COLS = 7;

function readFilters(q) {
  return {
    status: q.get('status') || '',
    name: q.get('name') || '',
    correlationId: q.get('correlationId') || '',
    from: q.get('from') || '',
    to: q.get('to') || '',
  };
}

function localMs(v) {
  if (!v) return null;
  const t = new Date(v).getTime();
  return Number.isNaN(t) ? null : t;
}

/** The search's query parameters for these filters (withStatus=false for the counts). */
function searchParams(f, withStatus = true) {
  const p = {};
  if (withStatus && f.status) p.status = f.status;
  if (f.name) p.workflowType = f.name;
  if (f.correlationId) p.correlationId = f.correlationId;
  const clauses = [];
  const from = localMs(f.from); const to = localMs(f.to);
  if (from !== null) clauses.push(`startTime >= ${from}`);
  if (to !== null) clauses.push(`startTime < ${to}`);
  if (clauses.length) p.query = clauses.join(' AND ');
  return p;
}

export default {
  title: 'Executions',
  async mount(root, params, ctx) {
    const { api } = ctx;
    let f = readFilters(params.query);
    const pager = new KeysetPager(params.query.get('cursor') || null);
    let timer = null;
    let alive = true;
    let loading = false;
    let countsAvailable = true;
    let nextCursor = null;

    // ---------------------------------------------------------- filters
    const statusSel = h('select', { name: 'status' },
      h('option', { value: '' }, 'Any status'),
      STATUSES.map((s) => h('option', { value: s }, s)));
    statusSel.value = f.status;

    let nameCtl = h('input', { type: 'text', name: 'name', placeholder: 'workflow name', spellcheck: 'false' });
    nameCtl.value = f.name;
    const nameField = field('Name', nameCtl);

    const corrCtl = h('input', { type: 'text', name: 'correlationId', placeholder: 'exact id', spellcheck: 'false' });
    corrCtl.value = f.correlationId;
    const fromCtl = h('input', { type: 'datetime-local', name: 'from', step: '1' });
    fromCtl.value = f.from;
    const toCtl = h('input', { type: 'datetime-local', name: 'to', step: '1' });
    toCtl.value = f.to;

    const clearBtn = h('button', { type: 'button', class: 'btn' }, 'Clear');
    const form = h('form', { class: 'filters card', role: 'search', 'aria-label': 'Filter executions' },
      field('Status', statusSel), nameField, field('Correlation id', corrCtl),
      field('Started from', fromCtl), field('Started before', toCtl),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'), clearBtn));

    const chips = h('div', { class: 'chips', role: 'group', 'aria-label': 'Executions by status' });
    const liveNote = h('span', { class: 'sub' });
    const tbody = h('tbody');
    const table = h('table', { class: 'data executions' },
      h('caption', { class: 'visually-hidden' }, 'Executions, newest first'),
      h('thead', h('tr',
        h('th', { scope: 'col' }, 'Workflow id'),
        h('th', { scope: 'col' }, 'Name'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Started'),
        h('th', { scope: 'col', class: 'num' }, 'Duration'),
        h('th', { scope: 'col' }, 'Correlation id'),
        h('th', { scope: 'col' }, 'Reason'))),
      tbody);
    const prevBtn = h('button', { type: 'button', class: 'btn' }, '← Previous');
    const nextBtn = h('button', { type: 'button', class: 'btn' }, 'Next page →');
    const pageInfo = h('span');
    const errBox = h('div', { class: 'notice notice-error', role: 'alert', hidden: true });

    root.append(
      h('div', { class: 'page-head' },
        h('div', h('h1', 'Executions'), liveNote)),
      form, chips, errBox,
      h('div', { class: 'table-wrap' }, table),
      h('div', { class: 'pager' }, pageInfo, prevBtn, nextBtn));
    tbody.appendChild(emptyRow(COLS, 'Loading…'));

    // Definition names for the name filter (a select when the list is readable).
    api.get('/api/metadata/workflow').then((defs) => {
      if (!alive || !Array.isArray(defs)) return;
      const names = [...new Set(defs.map((d) => d.name))].sort();
      if (f.name && !names.includes(f.name)) names.push(f.name);
      const sel = h('select', { name: 'name', id: nameCtl.id },
        h('option', { value: '' }, 'Any workflow'),
        names.map((n) => h('option', { value: n }, n)));
      sel.value = f.name;
      sel.addEventListener('change', () => apply());
      nameCtl.replaceWith(sel);
      nameCtl = sel;
    }).catch(() => { /* keep the text box */ });

    // ---------------------------------------------------------- hash <-> state
    function writeHash() {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
      if (pager.cursor) q.set('cursor', pager.cursor);
      const s = q.toString();
      const hash = `#/executions${s ? `?${s}` : ''}`;
      if (location.hash !== hash) history.replaceState(null, '', hash);
    }

    function apply() {
      f = {
        status: statusSel.value,
        name: nameCtl.value.trim(),
        correlationId: corrCtl.value.trim(),
        from: fromCtl.value,
        to: toCtl.value,
      };
      pager.reset();
      writeHash();
      load(true);
    }
    form.addEventListener('submit', (ev) => { ev.preventDefault(); apply(); });
    statusSel.addEventListener('change', () => apply());
    clearBtn.addEventListener('click', () => {
      statusSel.value = ''; nameCtl.value = ''; corrCtl.value = ''; fromCtl.value = ''; toCtl.value = '';
      apply();
    });
    prevBtn.addEventListener('click', () => { pager.prev(); writeHash(); load(true); });
    nextBtn.addEventListener('click', () => {
      if (pager.next(nextCursor)) { writeHash(); load(true); }
    });

    // ---------------------------------------------------------- rendering
    function row(w) {
      const start = toMs(w.startTime);
      const end = toMs(w.endTime);
      const running = !end && (w.status === 'RUNNING' || w.status === 'PAUSED');
      let dur = '';
      if (start !== null && end !== null) dur = duration(end - start);
      else if (typeof w.executionTime === 'number' && w.executionTime > 0 && !running) dur = duration(w.executionTime);
      else if (start !== null && running) dur = duration(Date.now() - start);
      const id = String(w.workflowId);
      return h('tr', { dataset: { workflowId: id } },
        h('td', h('a', { class: 'id-link', href: `#/executions/${encodeURIComponent(id)}`, title: id }, id)),
        h('td', { class: 'nowrap' },
          h('a', { href: `#/definitions/${encodeURIComponent(w.workflowType || '')}/${encodeURIComponent(w.version ?? '')}`, class: 'def-link' }, w.workflowType || ''),
          h('span', { class: 'muted' }, w.version !== undefined && w.version !== null ? ` v${w.version}` : '')),
        h('td', { class: 'status-cell' }, badge(w.status)),
        h('td', { class: 'nowrap' }, start !== null
          ? h('time', { datetime: new Date(start).toISOString(), title: absTime(start) }, relTime(start))
          : h('span', { class: 'muted' }, '—')),
        h('td', { class: ['num', 'nowrap', running ? 'muted' : ''], dataset: running && start !== null ? { runningSince: String(start) } : null }, dur || '—'),
        h('td', { class: 'ellipsis mono', title: w.correlationId || '' }, w.correlationId || ''),
        h('td', { class: 'reason', title: w.reasonForIncompletion || '' }, w.reasonForIncompletion || ''));
    }

    let lastSig = null;
    function refreshTimes() {
      const now = Date.now();
      for (const t of tbody.querySelectorAll('time[datetime]')) t.textContent = relTime(Date.parse(t.getAttribute('datetime')), now);
      for (const td of tbody.querySelectorAll('td[data-running-since]')) td.textContent = duration(now - Number(td.dataset.runningSince));
    }

    function renderRows(results) {
      // the same rows as on screen: only the clocks move (keeps selection, focus and hover)
      const sig = `${pager.cursor}|${results.map((w) => `${w.workflowId}:${w.status}:${w.endTime || ''}:${w.reasonForIncompletion || ''}`).join(',')}`;
      if (sig === lastSig && tbody.querySelector('tr[data-workflow-id]')) { refreshTimes(); return; }
      lastSig = sig;
      const focusedId = document.activeElement && tbody.contains(document.activeElement)
        ? document.activeElement.closest('tr')?.dataset.workflowId : null;
      const frag = document.createDocumentFragment();
      if (!results.length) {
        frag.appendChild(emptyRow(COLS, pager.isFirst ? 'No executions match these filters.' : 'No more executions.'));
      } else {
        for (const w of results) frag.appendChild(row(w));
      }
      clear(tbody).appendChild(frag);
      if (focusedId) {
        const a = tbody.querySelector(`tr[data-workflow-id="${CSS.escape(focusedId)}"] a`);
        if (a) a.focus();
      }
    }

    function renderPager(count) {
      prevBtn.disabled = !pager.hasPrev;
      nextBtn.disabled = !nextCursor;
      pageInfo.textContent = count ? `Page ${pager.page} · ${count} shown` : `Page ${pager.page}`;
    }

    function renderChips(counts, cap) {
      const frag = document.createDocumentFragment();
      for (const s of STATUSES) {
        const n = counts[s] ?? 0;
        const label = cap && n >= cap ? `${fmtNum(cap)}+` : fmtNum(n);
        const active = f.status === s;
        frag.appendChild(h('button', {
          type: 'button', class: `chip st-${s.toLowerCase()}`, 'aria-pressed': active ? 'true' : 'false',
          title: active ? 'Show every status' : `Show only ${s}`,
          onclick: () => { statusSel.value = active ? '' : s; apply(); },
        }, h('span', { class: 'dot', 'aria-hidden': 'true' }), s, h('span', { class: 'count' }, label)));
      }
      const focusedStatus = document.activeElement && chips.contains(document.activeElement)
        ? document.activeElement.className : null;
      clear(chips).appendChild(frag);
      if (focusedStatus) {
        const b = chips.querySelector(`button[class="${CSS.escape(focusedStatus)}"]`);
        if (b) b.focus();
      }
    }

    async function loadCounts() {
      if (!countsAvailable) return;
      try {
        const r = await api.get('/api/workflow/counts', searchParams(f, false));
        if (!alive) return;
        if (!r || typeof r.counts !== 'object') { chips.hidden = true; return; }
        chips.hidden = false;
        renderChips(r.counts, r.cap);
      } catch (e) {
        if (!alive) return;
        // 404 (or 400 from an older node taking "counts" for a workflow id): no counts route
        if (e.status === 404 || e.status === 400 || e.status === 405) { countsAvailable = false; chips.hidden = true; }
      }
    }

    async function load(userAction) {
      if (loading && !userAction) return;
      loading = true;
      const cursor = pager.cursor;
      try {
        const p = searchParams(f, true);
        p.size = PAGE_SIZE;
        if (cursor) p.cursor = cursor;
        const r = await api.get('/api/workflow/search', p);
        if (!alive || cursor !== pager.cursor) return;
        errBox.hidden = true;
        const results = (r && Array.isArray(r.results)) ? r.results : [];
        nextCursor = r ? r.nextCursor || null : null;
        renderRows(results);
        renderPager(results.length);
        liveNote.textContent = pager.isFirst
          ? `Newest first · refreshed ${absTime(Date.now()).slice(11)}`
          : 'Newest first · this page is not refreshed';
      } catch (e) {
        if (!alive) return;
        if (e.status === 401) return;
        errBox.hidden = false;
        errBox.textContent = `Could not load executions: ${e.message}`;
        if (userAction) { clear(tbody).appendChild(emptyRow(COLS, '—')); lastSig = null; nextCursor = null; renderPager(0); }
      } finally {
        loading = false;
      }
      loadCounts();
    }

    function tick() {
      if (!alive) return;
      if (pager.isFirst && !document.hidden) load(false);
      else if (!document.hidden) loadCounts();
      timer = setTimeout(tick, REFRESH_MS);
    }

    chips.hidden = true;
    await load(true);
    timer = setTimeout(tick, REFRESH_MS);

    return () => { alive = false; clearTimeout(timer); };
  },
};
