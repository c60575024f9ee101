// Cluster: the nodes, who owns which partition, pending decisions; refreshed every 3 s.
import { h, clear, duration, fmtNum, emptyRow, absTime, repeat } from '../dom.js';

const REFRESH_MS = 3000;

function kpi(label, valueEl) {
  return h('div', { class: 'card kpi' }, h('div', { class: 'k' }, label), valueEl);
}

export default {
  title: 'Cluster',
  async mount(root, params, ctx) {
    let alive = true;

    const note = h('span', { class: 'sub' });
    const errBox = h('div', { class: 'notice notice-error', role: 'alert', hidden: true });
    const kNode = h('div', { class: 'v small mono' }, '—');
    const kNodes = h('div', { class: 'v' }, '—');
    const kParts = h('div', { class: 'v' }, '—');
    const kPending = h('div', { class: 'v' }, '—');
    const nodesBody = h('tbody');
    const partsBody = h('tbody');
    const shardsBody = h('tbody');
    const nodesNote = h('p', { class: 'muted small', hidden: true });
    const partsNote = h('p', { class: 'muted small', hidden: true });
    nodesBody.appendChild(emptyRow(5, 'Loading…'));
    partsBody.appendChild(emptyRow(5, 'Loading…'));

    root.append(
      h('div', { class: 'page-head' }, h('div', h('h1', 'Cluster'), note)),
      errBox,
      h('div', { class: 'kpis' },
        kpi('This node', kNode), kpi('Live nodes', kNodes), kpi('Partitions here', kParts), kpi('Pending decisions', kPending)),
      h('div', { class: 'grid-2' },
        h('section', { 'aria-labelledby': 'nodes-h' },
          h('h2', { id: 'nodes-h' }, 'Nodes'),
          nodesNote,
          h('div', { class: 'table-wrap free' }, h('table', { class: 'data', 'data-testid': 'cluster-nodes' },
            h('thead', h('tr',
              h('th', { scope: 'col' }, 'Node id'),
              h('th', { scope: 'col' }, 'Address'),
              h('th', { scope: 'col', class: 'num', title: 'time since its last heartbeat' }, 'Heartbeat'),
              h('th', { scope: 'col' }, 'Alive'),
              h('th', { scope: 'col', class: 'num', title: 'partitions owned' }, 'Partitions'))),
            nodesBody)),
          h('section', { class: 'section', 'aria-labelledby': 'shards-h' },
            h('h2', { id: 'shards-h' }, 'Pending decisions by shard'),
            h('div', { class: 'table-wrap free' }, h('table', { class: 'data' },
              h('thead', h('tr', h('th', { scope: 'col' }, 'Shard'), h('th', { scope: 'col', class: 'num' }, 'Pending'))),
              shardsBody)))),
        h('section', { 'aria-labelledby': 'parts-h' },
          h('h2', { id: 'parts-h' }, 'Partitions'),
          partsNote,
          h('div', { class: 'table-wrap' }, h('table', { class: 'data', 'data-testid': 'cluster-partitions' },
            h('thead', h('tr',
              h('th', { scope: 'col', class: 'num' }, 'Partition'),
              h('th', { scope: 'col' }, 'Owner node'),
              h('th', { scope: 'col', class: 'num' }, 'Epoch'),
              h('th', { scope: 'col', class: 'num', title: 'lease remaining' }, 'Lease left'),
              h('th', { scope: 'col', class: 'num' }, 'Held for'))),
            partsBody)))));

    function shortId(id) {
      const s = String(id ?? '');
      return s.length > 13 ? `${s.slice(0, 8)}…${s.slice(-4)}` : s;
    }

    function render(c) {
      const node = c.node || {};
      const selfId = node.nodeId || node.id || '';
      kNode.textContent = node.address ? `${node.address}` : shortId(selfId);
      kNode.title = selfId;

      // nodes: the cluster's list, or just this node on a node that does not list them
      let nodes = Array.isArray(c.nodes) ? c.nodes : null;
      const partitions = Array.isArray(c.partitions) ? c.partitions : null;
      const owned = new Map();
      if (partitions) for (const p of partitions) if (p.owner) owned.set(p.owner, (owned.get(p.owner) || 0) + 1);
      if (Array.isArray(c.nodes)) for (const n of c.nodes) if (typeof n.partitions === 'number') owned.set(n.id, n.partitions);
      nodesNote.hidden = !!nodes;
      if (!nodes) {
        nodesNote.textContent = 'This node does not list the other nodes; showing itself.';
        nodes = [{ id: selfId, address: node.address, heartbeatAgeMs: null, alive: true, self: true }];
        owned.set(selfId, Array.isArray(node.running) ? node.running.length : (Array.isArray(node.partitions) ? node.partitions.length : 0));
      }
      kNodes.textContent = fmtNum(c.nodes ? nodes.filter((n) => n.alive).length : (node.liveNodes ?? nodes.length));
      const frag = document.createDocumentFragment();
      if (!nodes.length) frag.appendChild(emptyRow(5, 'No nodes.'));
      const sorted = nodes.slice().sort((a, b) => (b.alive ? 1 : 0) - (a.alive ? 1 : 0)
        || (a.heartbeatAgeMs ?? 0) - (b.heartbeatAgeMs ?? 0));
      for (const n of sorted) {
        const isSelf = n.self || n.id === selfId;
        frag.appendChild(h('tr', { dataset: { nodeId: n.id } },
          h('td', { class: 'mono', title: n.id }, shortId(n.id), isSelf ? h('span', { class: 'tag', title: 'the node serving this page' }, 'this node') : null),
          h('td', { class: 'mono' }, n.address || ''),
          h('td', { class: 'num nowrap' }, n.heartbeatAgeMs === null || n.heartbeatAgeMs === undefined ? '—' : duration(n.heartbeatAgeMs)),
          h('td', n.alive
            ? h('span', { class: 'badge st-alive' }, 'alive')
            : n.stopped
              ? h('span', { class: 'badge st-terminated', title: 'stopped cleanly' }, 'stopped')
              : h('span', { class: 'badge st-dead', title: 'no heartbeat' }, 'down')),
          h('td', { class: 'num' }, fmtNum(owned.get(n.id) || 0))));
      }
      clear(nodesBody).appendChild(frag);

      // partitions: everyone's, or the ones this node runs
      let parts = partitions;
      partsNote.hidden = !!parts;
      if (!parts) {
        partsNote.textContent = 'This node reports only the partitions it runs.';
        parts = (Array.isArray(node.partitions) ? node.partitions : []).map((p) => ({ ...p, owner: selfId }));
      }
      const addr = new Map(nodes.filter((n) => n.address).map((n) => [n.id, n.address]));
      const mine = parts.filter((p) => p.owner === selfId).length;
      kParts.textContent = `${fmtNum(mine)}${node.partitionCount ? ` / ${node.partitionCount}` : ''}`;
      const pf = document.createDocumentFragment();
      if (!parts.length) pf.appendChild(emptyRow(5, 'No partitions.'));
      for (const p of parts.slice().sort((a, b) => a.partition - b.partition)) {
        const lr = p.leaseRemainingMs;
        pf.appendChild(h('tr', { dataset: { partition: String(p.partition) } },
          h('td', { class: 'num' }, String(p.partition)),
          h('td', { class: 'mono nowrap', title: p.owner || '' }, p.owner ? (addr.get(p.owner) || shortId(p.owner)) : h('span', { class: 'muted' }, 'unowned'),
            p.owner && p.owner === selfId ? h('span', { class: 'self-mark', title: 'this node' }, ' ●') : null),
          h('td', { class: 'num' }, p.epoch === undefined ? '—' : String(p.epoch)),
          h('td', { class: ['num', 'nowrap', typeof lr === 'number' && lr <= 0 ? 'age-bad' : ''] },
            lr === undefined || lr === null ? '—' : lr <= 0 ? 'expired' : duration(lr)),
          h('td', { class: 'num nowrap muted' }, typeof p.heldMs === 'number' ? duration(p.heldMs) : '—')));
      }
      clear(partsBody).appendChild(pf);

      const pd = c.pendingDecisions || {};
      kPending.textContent = fmtNum(pd.total ?? 0);
      const sf = document.createDocumentFragment();
      const shards = Object.entries(pd.byShard || {}).sort((a, b) => Number(a[0]) - Number(b[0]));
      if (!shards.length) sf.appendChild(emptyRow(2, 'No decisions pending.'));
      for (const [k, v] of shards) sf.appendChild(h('tr', h('td', k), h('td', { class: 'num' }, fmtNum(v))));
      clear(shardsBody).appendChild(sf);
    }

    async function load() {
      try {
        const c = await ctx.api.get('/api/cluster');
        if (!alive) return;
        errBox.hidden = true;
        render(c || {});
        note.textContent = `Live · refreshed ${absTime(Date.now()).slice(11)}`;
      } catch (e) {
        if (!alive || e.status === 401) return;
        errBox.hidden = false;
        errBox.textContent = `Could not load the cluster: ${e.message}`;
      }
    }
    await load();
    const stop = repeat(REFRESH_MS, load);
    return () => { alive = false; stop(); };
  },
};
