// Definitions: workflow definitions (every version) and task definitions; one definition's
// diagram and JSON.
import { h, clear, emptyRow, absTime, toMs } from '../dom.js';

function byNameThenVersion(defs) {
  const m = new Map();
  for (const d of defs) {
    if (!m.has(d.name)) m.set(d.name, []);
    m.get(d.name).push(d);
  }
  for (const list of m.values()) list.sort((a, b) => (a.version ?? 0) - (b.version ?? 0));
  return [...m.entries()].sort((a, b) => a[0].localeCompare(b[0]));
}

const defHref = (name, version) => `#/definitions/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;

function countTasks(tasks) {
  let n = 0;
  const walk = (list) => {
    for (const t of list || []) {
      n += 1;
      if (t.decisionCases) Object.values(t.decisionCases).forEach(walk);
      if (t.defaultCase) walk(t.defaultCase);
      if (t.forkTasks) t.forkTasks.forEach(walk);
      if (t.loopOver) walk(t.loopOver);
    }
  };
  walk(tasks);
  return n;
}

async function jsonBlock(value) {
  try {
    const mod = await import('../json_view.js');
    const fn = mod.jsonView || mod.default;
    if (typeof fn === 'function') return fn(value, { collapsedDepth: 2 });
  } catch { /* the viewer is not there: plain text */ }
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

async function listView(root, ctx) {
  const wfBody = h('tbody');
  const tdBody = h('tbody');
  wfBody.appendChild(emptyRow(5, 'Loading…'));
  tdBody.appendChild(emptyRow(7, 'Loading…'));
  root.append(
    h('div', { class: 'page-head' }, h('div', h('h1', 'Definitions'),
      h('span', { class: 'sub' }, 'Workflow definitions by name, every version; the task definitions below.'))),
    h('section', { 'aria-labelledby': 'wf-defs' },
      h('h2', { id: 'wf-defs' }, 'Workflow definitions'),
      h('div', { class: 'table-wrap free' }, h('table', { class: 'data' },
        h('thead', h('tr',
          h('th', { scope: 'col' }, 'Name'),
          h('th', { scope: 'col' }, 'Versions'),
          h('th', { scope: 'col', class: 'num' }, 'Tasks'),
          h('th', { scope: 'col' }, 'Description'),
          h('th', { scope: 'col' }, 'Executions'))),
        wfBody))),
    h('section', { class: 'section', 'aria-labelledby': 'task-defs' },
      h('h2', { id: 'task-defs' }, 'Task definitions'),
      h('div', { class: 'table-wrap free' }, h('table', { class: 'data' },
        h('thead', h('tr',
          h('th', { scope: 'col' }, 'Name'),
          h('th', { scope: 'col' }, 'Description'),
          h('th', { scope: 'col', class: 'num' }, 'Retries'),
          h('th', { scope: 'col' }, 'Retry logic'),
          h('th', { scope: 'col', class: 'num' }, 'Timeout'),
          h('th', { scope: 'col', class: 'num' }, 'Response timeout'),
          h('th', { scope: 'col' }, 'Limits'))),
        tdBody))));

  const [wf, td] = await Promise.allSettled([ctx.api.get('/api/metadata/workflow'), ctx.api.get('/api/metadata/taskdefs')]);

  clear(wfBody);
  if (wf.status === 'rejected') {
    wfBody.appendChild(emptyRow(5, `Could not load workflow definitions: ${wf.reason.message}`));
  } else {
    const groups = byNameThenVersion(Array.isArray(wf.value) ? wf.value : []);
    if (!groups.length) wfBody.appendChild(emptyRow(5, 'No workflow definitions yet (nodeflow defs put FILE…).'));
    const frag = document.createDocumentFragment();
    for (const [name, versions] of groups) {
      const latest = versions[versions.length - 1];
      frag.appendChild(h('tr', { dataset: { definition: name } },
        h('td', h('a', { href: defHref(name, latest.version) }, h('strong', name))),
        h('td', { class: 'nowrap' }, versions.map((d, i) => [i ? ' ' : '',
          h('a', { href: defHref(name, d.version), class: 'badge', title: `version ${d.version}` }, `v${d.version}`)])),
        h('td', { class: 'num' }, String(countTasks(latest.tasks))),
        h('td', { class: 'muted' }, latest.description || ''),
        h('td', h('a', { href: `#/executions?name=${encodeURIComponent(name)}` }, 'Executions →'))));
    }
    wfBody.appendChild(frag);
  }

  clear(tdBody);
  if (td.status === 'rejected') {
    tdBody.appendChild(emptyRow(7, `Could not load task definitions: ${td.reason.message}`));
  } else {
    const list = (Array.isArray(td.value) ? td.value : []).slice().sort((a, b) => a.name.localeCompare(b.name));
    if (!list.length) tdBody.appendChild(emptyRow(7, 'No task definitions yet.'));
    const frag = document.createDocumentFragment();
    for (const t of list) {
      const limits = [];
      if (t.concurrentExecLimit) limits.push(`${t.concurrentExecLimit} at once`);
      if (t.rateLimitPerFrequency) limits.push(`${t.rateLimitPerFrequency} per ${t.rateLimitFrequencyInSeconds || 1} s`);
      frag.appendChild(h('tr',
        h('td', { class: 'mono' }, t.name),
        h('td', { class: 'muted' }, t.description || ''),
        h('td', { class: 'num' }, String(t.retryCount ?? 0)),
        h('td', t.retryCount ? (t.retryLogic || '') : h('span', { class: 'muted' }, '—')),
        h('td', { class: 'num nowrap' }, t.timeoutSeconds ? `${t.timeoutSeconds} s` : '—'),
        h('td', { class: 'num nowrap' }, t.responseTimeoutSeconds ? `${t.responseTimeoutSeconds} s` : '—'),
        h('td', { class: 'muted' }, limits.join(', ') || '—')));
    }
    tdBody.appendChild(frag);
  }
}

async function detailView(root, params, ctx) {
  const { name } = params;
  const head = h('div', { class: 'page-head' },
    h('div', h('h1', name), h('span', { class: 'sub' }, h('a', { href: '#/definitions' }, '← All definitions'))),
    h('div', { class: 'head-actions' },
      h('a', { class: 'btn', href: `#/executions?name=${encodeURIComponent(name)}` }, 'Executions of this workflow')));
  const versionNav = h('ul', { class: 'version-list' });
  const meta = h('dl', { class: 'def-meta' });
  const diagramBox = h('div', { class: 'diagram-box' }, h('span', { class: 'muted' }, 'Loading…'));
  const jsonBox = h('div', { class: 'json-box' });
  root.append(head,
    h('div', { class: 'def-layout' },
      h('aside', { class: 'card' },
        h('nav', { 'aria-label': 'Versions', class: 'card-pad' }, h('h3', 'Versions'), versionNav)),
      h('div',
        h('section', { class: 'card card-pad', 'aria-label': 'About this version' }, meta),
        h('section', { class: 'section', 'aria-labelledby': 'diagram-h' },
          h('h2', { id: 'diagram-h' }, 'Diagram'),
          h('div', { class: 'card' }, diagramBox)),
        h('section', { class: 'section', 'aria-labelledby': 'json-h' },
          h('h2', { id: 'json-h' }, 'Definition JSON'),
          h('div', { class: 'card' }, jsonBox)))));

  // versions from the full list; the definition itself by name and version
  const [all, one] = await Promise.allSettled([
    ctx.api.get('/api/metadata/workflow'),
    ctx.api.get(`/api/metadata/workflow/${encodeURIComponent(name)}`, params.version ? { version: params.version } : undefined),
  ]);
  if (one.status === 'rejected') {
    clear(diagramBox);
    root.insertBefore(h('div', { class: 'notice notice-error', role: 'alert' },
      one.reason.status === 404 ? `There is no workflow definition ${name}${params.version ? ` version ${params.version}` : ''}.` : `Could not load the definition: ${one.reason.message}`), head.nextSibling);
    diagramBox.appendChild(h('span', { class: 'muted' }, '—'));
    return;
  }
  const def = one.value;
  const versions = all.status === 'fulfilled' && Array.isArray(all.value)
    ? all.value.filter((d) => d.name === name).map((d) => d.version).sort((a, b) => a - b)
    : [def.version];
  for (const v of versions) {
    const a = h('a', { href: defHref(name, v) }, `Version ${v}`);
    if (String(v) === String(def.version)) a.setAttribute('aria-current', 'page');
    versionNav.appendChild(h('li', a));
  }
  const row = (k, v) => (v === undefined || v === null || v === '' ? null : [h('dt', k), h('dd', v)]);
  const updated = toMs(def.updateTime || def.createTime);
  meta.append(...[
    row('Version', String(def.version)),
    row('Description', def.description || ''),
    row('Tasks', String(countTasks(def.tasks))),
    row('Inputs', Array.isArray(def.inputParameters) && def.inputParameters.length ? def.inputParameters.join(', ') : ''),
    row('Timeout', def.timeoutSeconds ? `${def.timeoutSeconds} s (${def.timeoutPolicy || 'TIME_OUT_WF'})` : 'none'),
    row('Restartable', def.restartable === undefined ? '' : (def.restartable ? 'yes' : 'no')),
    row('Failure workflow', def.failureWorkflow || ''),
    row('Owner', def.ownerEmail || ''),
    row('Updated', updated ? absTime(updated) : ''),
  ].filter(Boolean).flat());

  jsonBox.appendChild(await jsonBlock(def));

  clear(diagramBox);
  try {
    const mod = await import('../diagram.js');
    const svg = mod.drawDiagram(def, new Map());
    diagramBox.appendChild(svg);
  } catch (e) {
    diagramBox.appendChild(h('p', { class: 'muted' },
      'The diagram is not available in this build; the definition\'s JSON is below.'));
    if (!(e instanceof TypeError)) console.error(e);
  }
}

export default {
  title: 'Definitions',
  async mount(root, params, ctx) {
    if (params.name) await detailView(root, params, ctx);
    else await listView(root, ctx);
  },
};
