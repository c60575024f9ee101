// Dead letters: outbox events that used up their deliveries; replay one or all.
import { h, clear, emptyRow, fmtNum, KeysetPager, actionButton, toMs, absTime, relTime } from '../dom.js';

const PAGE_SIZE = 50;
const COLS = 7;

function summary(payload) {
  if (payload === null || payload === undefined) return '';
  const s = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}

export default {
  title: 'Dead letters',
  async mount(root, params, ctx) {
    const { api, me } = ctx;
    let alive = true;
    const pager = new KeysetPager(params.query.get('afterId') || null);
    let nextAfterId = null;

    const note = h('span', { class: 'sub' }, 'Outbox events whose webhook deliveries all failed, oldest first.');
    const errBox = h('div', { class: 'notice notice-error', role: 'alert', hidden: true });
    const tbody = h('tbody');
    tbody.appendChild(emptyRow(COLS, 'Loading…'));
    const prevBtn = h('button', { type: 'button', class: 'btn' }, '← Previous');
    const nextBtn = h('button', { type: 'button', class: 'btn' }, 'Next page →');
    const pageInfo = h('span');

    async function replay(ids) {
      const what = ids ? (ids.length === 1 ? `dead letter ${ids[0]}` : `${ids.length} dead letters`) : 'every dead letter of this namespace';
      const ok = await ctx.confirm(`Queue ${what} for delivery again?`, { confirmLabel: ids ? 'Replay dead letter' : 'Replay all dead letters' });
      if (!ok) return;
      try {
        const r = await api.post('/api/deadletters/replay', ids ? { ids } : {});
        const n = r && typeof r.replayed === 'number' ? r.replayed : 0;
        ctx.toast(`Replayed ${fmtNum(n)} dead letter${n === 1 ? '' : 's'}.`, 'ok');
        if (alive) load();
      } catch (e) {
        ctx.toast(e.status === 403 ? `Not allowed: ${e.message}` : `Replay failed: ${e.message}`, 'error');
      }
    }

    const replayAll = actionButton('Replay all', me, 'operator', () => replay(null), { class: 'btn btn-primary' });
    const refreshBtn = h('button', { type: 'button', class: 'btn', onclick: () => load() }, 'Refresh');

    root.append(
      h('div', { class: 'page-head' },
        h('div', h('h1', 'Dead letters'), note),
        h('div', { class: 'head-actions' }, refreshBtn, replayAll)),
      errBox,
      h('div', { class: 'table-wrap tall' }, h('table', { class: 'data', 'data-testid': 'deadletters' },
        h('thead', h('tr',
          h('th', { scope: 'col', class: 'num' }, 'Id'),
          h('th', { scope: 'col' }, 'Event'),
          h('th', { scope: 'col' }, 'Workflow'),
          h('th', { scope: 'col', class: 'num' }, 'Attempts'),
          h('th', { scope: 'col' }, 'Last error'),
          h('th', { scope: 'col' }, 'Payload'),
          h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
        tbody)),
      h('div', { class: 'pager' }, pageInfo, prevBtn, nextBtn));

    prevBtn.addEventListener('click', () => { pager.prev(); sync(); load(); });
    nextBtn.addEventListener('click', () => { if (pager.next(nextAfterId)) { sync(); load(); } });
    function sync() {
      history.replaceState(null, '', pager.cursor ? `#/deadletters?afterId=${encodeURIComponent(pager.cursor)}` : '#/deadletters');
    }

    function row(d) {
      const dead = toMs(d.deadLetteredAt);
      const payloadText = d.payload === undefined ? '' : JSON.stringify(d.payload, null, 2);
      return h('tr', { dataset: { deadletterId: String(d.id) } },
        h('td', { class: 'num mono' }, String(d.id)),
        h('td', h('div', { class: 'mono' }, d.eventType || ''),
          dead ? h('div', { class: 'muted small' }, h('time', { title: absTime(dead) }, relTime(dead))) : null),
        h('td', d.workflowId
          ? h('a', { class: 'id-link', href: `#/executions/${encodeURIComponent(d.workflowId)}`, title: d.workflowId, 'aria-label': `workflow ${d.workflowId}` },
            d.workflowId.length > 16 ? `${d.workflowId.slice(0, 8)}…${d.workflowId.slice(-6)}` : d.workflowId)
          : h('span', { class: 'muted' }, '—')),
        h('td', { class: 'num' }, fmtNum(d.attempts ?? 0)),
        h('td', { class: 'dl-error', title: d.lastError || '' }, d.lastError || ''),
        h('td', payloadText
          ? h('details', { class: 'payload' }, h('summary', { class: 'mono small' }, summary(d.payload)), h('pre', { class: 'json' }, payloadText))
          : ''),
        h('td', { class: 'right' }, actionButton('Replay', me, 'operator', () => replay([d.id]), { class: 'btn btn-small' })));
    }

    async function load() {
      const cursor = pager.cursor;
      try {
        const r = await api.get('/api/deadletters', { afterId: cursor || undefined, limit: PAGE_SIZE });
        if (!alive || cursor !== pager.cursor) return;
        errBox.hidden = true;
        const list = r && Array.isArray(r.deadLetters) ? r.deadLetters : [];
        nextAfterId = r && r.nextAfterId !== null && r.nextAfterId !== undefined ? String(r.nextAfterId) : null;
        const frag = document.createDocumentFragment();
        if (!list.length) frag.appendChild(emptyRow(COLS, pager.isFirst ? 'No dead letters: every event was delivered.' : 'No more dead letters.'));
        for (const d of list) frag.appendChild(row(d));
        clear(tbody).appendChild(frag);
        prevBtn.disabled = !pager.hasPrev;
        nextBtn.disabled = !nextAfterId;
        pageInfo.textContent = `Page ${pager.page}${list.length ? ` · ${list.length} shown` : ''}`;
      } catch (e) {
        if (!alive || e.status === 401) return;
        errBox.hidden = false;
        errBox.textContent = `Could not load dead letters: ${e.message}`;
      }
    }

    await load();
    return () => { alive = false; };
  },
};
