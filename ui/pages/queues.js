// Queues: depth, the oldest ready task's age and the workers polling, refreshed every 3 s.
import { h, clear, duration, fmtNum, emptyRow, absTime, repeat } from '../dom.js';

const REFRESH_MS = 3000;
const COLS = 5;

export default {
  title: 'Queues',
  async mount(root, params, ctx) {
    let alive = true;
    let data = [];
    const initialSort = params.query.get('sort');
    let sort = { key: ['name', 'depth', 'leased', 'age', 'polling'].includes(initialSort) ? initialSort : 'depth', dir: params.query.get('dir') === 'asc' ? 'asc' : 'desc' };

    const kTotal = h('div', { class: 'v' }, '—');
    const kLeased = h('div', { class: 'v' }, '—');
    const kOldest = h('div', { class: 'v' }, '—');
    const kQueues = h('div', { class: 'v' }, '—');
    const note = h('span', { class: 'sub' });
    const errBox = h('div', { class: 'notice notice-error', role: 'alert', hidden: true });
    const tbody = h('tbody');
    tbody.appendChild(emptyRow(COLS, 'Loading…'));

    const headers = {};
    function th(label, key, num) {
      const b = h('button', { type: 'button', class: 'sort-btn' }, label);
      const cell = h('th', { scope: 'col', class: num ? 'num' : null }, b);
      b.addEventListener('click', () => {
        if (sort.key === key) sort.dir = sort.dir === 'asc' ? 'desc' : 'asc';
        else sort = { key, dir: key === 'name' ? 'asc' : 'desc' };
        const q = new URLSearchParams({ sort: sort.key, dir: sort.dir });
        history.replaceState(null, '', `#/queues?${q}`);
        render();
      });
      headers[key] = cell;
      return cell;
    }

    root.append(
      h('div', { class: 'page-head' }, h('div', h('h1', 'Queues'), note)),
      errBox,
      h('div', { class: 'kpis' },
        h('div', { class: 'card kpi' }, h('div', { class: 'k' }, 'Ready tasks'), kTotal),
        h('div', { class: 'card kpi' }, h('div', { class: 'k' }, 'Leased tasks'), kLeased),
        h('div', { class: 'card kpi' }, h('div', { class: 'k' }, 'Oldest ready task'), kOldest),
        h('div', { class: 'card kpi' }, h('div', { class: 'k' }, 'Queues with work'), kQueues)),
      h('div', { class: 'table-wrap tall' }, h('table', { class: 'data', 'data-testid': 'queues' },
        h('thead', h('tr',
          th('Queue', 'name'),
          th('Ready (depth)', 'depth', true),
          th('Leased', 'leased', true),
          th('Oldest ready', 'age', true),
          th('Workers polling', 'polling', true))),
        tbody)));

    const val = {
      name: (q) => q.name,
      depth: (q) => q.ready ?? 0,
      leased: (q) => q.leased ?? 0,
      age: (q) => (q.oldestReadyAgeMs ?? -1),
      polling: (q) => (q.polling ?? -1),
    };

    function ageClass(ms) {
      if (ms === null || ms === undefined) return '';
      if (ms > 300e3) return 'age-bad';
      if (ms > 30e3) return 'age-warn';
      return '';
    }

    function render() {
      for (const [k, cell] of Object.entries(headers)) {
        if (k === sort.key) cell.setAttribute('aria-sort', sort.dir === 'asc' ? 'ascending' : 'descending');
        else cell.removeAttribute('aria-sort');
      }
      const f = val[sort.key];
      const rows = data.slice().sort((a, b) => {
        const x = f(a); const y = f(b);
        const c = typeof x === 'string' ? x.localeCompare(y) : x - y;
        return (sort.dir === 'asc' ? c : -c) || a.name.localeCompare(b.name);
      });
      const maxDepth = Math.max(1, ...rows.map((q) => q.ready ?? 0));
      const frag = document.createDocumentFragment();
      if (!rows.length) frag.appendChild(emptyRow(COLS, 'No queue holds tasks and no worker is polling.'));
      for (const q of rows) {
        const bar = h('span');
        bar.style.width = `${Math.round(((q.ready ?? 0) / maxDepth) * 100)}%`;
        const hasAge = q.oldestReadyAgeMs !== undefined;
        frag.appendChild(h('tr', { dataset: { queue: q.name } },
          h('td', { class: 'mono' }, q.name),
          h('td', { class: 'num' }, h('div', { class: 'nowrap' }, fmtNum(q.ready ?? 0)),
            h('div', { class: ['bar', ageClass(q.oldestReadyAgeMs) ? 'warn' : ''], 'aria-hidden': 'true' }, bar)),
          h('td', { class: 'num' }, fmtNum(q.leased ?? 0)),
          h('td', { class: ['num', 'nowrap', ageClass(q.oldestReadyAgeMs)] },
            !hasAge ? h('span', { class: 'muted', title: 'this node does not report ages' }, 'n/a')
              : q.oldestReadyAgeMs === null ? h('span', { class: 'muted' }, '—') : duration(q.oldestReadyAgeMs)),
          (() => {
            if (q.polling === undefined || q.polling === null) return h('td', { class: 'num' }, h('span', { class: 'muted' }, '—'));
            const starving = (q.ready ?? 0) > 0 && q.polling === 0 && (q.leased ?? 0) === 0;
            return h('td', { class: ['num', starving ? 'age-warn' : ''], title: starving ? 'tasks are waiting and no worker is polling this queue here' : null }, fmtNum(q.polling));
          })()));
      }
      clear(tbody).appendChild(frag);
      const totalReady = data.reduce((s, q) => s + (q.ready ?? 0), 0);
      const totalLeased = data.reduce((s, q) => s + (q.leased ?? 0), 0);
      const ages = data.map((q) => q.oldestReadyAgeMs).filter((x) => typeof x === 'number');
      kTotal.textContent = fmtNum(totalReady);
      kLeased.textContent = fmtNum(totalLeased);
      kOldest.textContent = ages.length ? duration(Math.max(...ages)) : (data.some((q) => 'oldestReadyAgeMs' in q) ? '—' : 'n/a');
      kQueues.textContent = fmtNum(data.filter((q) => (q.ready ?? 0) + (q.leased ?? 0) > 0).length);
    }

    async function load() {
      try {
        const c = await ctx.api.get('/api/cluster');
        if (!alive) return;
        errBox.hidden = true;
        const queues = Array.isArray(c && c.queues) ? c.queues.map((q) => ({ ...q })) : [];
        // an older node reports the parked polls per queue on the node instead
        // queues with no task but workers parked here are listed too (from the node's polls)
        const hasAge = queues.some((q) => 'oldestReadyAgeMs' in q);
        const waiting = (c && c.node && c.node.waitingPolls) || {};
        const byName = new Map(queues.map((q) => [q.name, q]));
        for (const [name, n] of Object.entries(waiting)) {
          const q = byName.get(name);
          if (q) { if (q.polling === undefined) q.polling = n; } else if (!name.startsWith('_system.')) {
            queues.push(hasAge ? { name, ready: 0, leased: 0, oldestReadyAgeMs: null, polling: n } : { name, ready: 0, leased: 0, polling: n });
          }
        }
        data = queues;
        note.textContent = `Live · refreshed ${absTime(Date.now()).slice(11)} · polls counted at this node`;
        render();
      } catch (e) {
        if (!alive || e.status === 401) return;
        errBox.hidden = false;
        errBox.textContent = `Could not load the queues: ${e.message}`;
      }
    }

    await load();
    const stop = repeat(REFRESH_MS, load);
    return () => { alive = false; stop(); };
  },
};
