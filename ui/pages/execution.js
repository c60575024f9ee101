// nodeflow: the page of one execution (#/executions/<id>): header, operator actions, the
// diagram with per-task attempts, a timeline, input/output/variables and the history, kept
// live from the workflow's event stream (no reload: states are recoloured in place).

import { drawDiagram, updateStates, selectNode, diagramViewer } from '../diagram.js';
import { jsonView } from '../json_view.js';
import { timeline, fmtDuration } from '../timeline.js';

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'TIMED_OUT', 'TERMINATED']);
const REFRESH_GAP_MS = 250;        // at most ~4 refreshes a second while events pour in
const ATTEMPTS_CHUNK = 40;
const CHILDREN_CHUNK = 120;

// ---------------------------------------------------------------- small DOM helpers

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of kids.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function badge(status, extra) {
  const s = String(status || 'UNKNOWN');
  const b = el('span', { class: `badge st-${s.toLowerCase()}` }, s);
  if (extra) for (const k in extra) b.setAttribute(k, extra[k]);
  return b;
}

const msOf = (v) => (typeof v === 'number' && v > 0 ? v : (typeof v === 'string' && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : null));
const pad = (n, w = 2) => String(n).padStart(w, '0');

function absTime(v) {
  const ms = msOf(v);
  if (!ms) return '—';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
function clockTime(v) {
  const ms = msOf(v);
  if (!ms) return '';
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
function timeEl(v) {
  const ms = msOf(v);
  if (!ms) return el('span', { class: 'muted' }, '—');
  return el('time', { datetime: new Date(ms).toISOString() }, absTime(ms));
}

function compact(v, n = 160) {
  let s;
  try { s = JSON.stringify(v); } catch { s = String(v); }
  if (s === undefined) s = '';
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

// ---------------------------------------------------------------- the task index

// Every definition task by ref (recursively), and the dynamic forks' parameter names.
function indexDefinition(def) {
  const byRef = new Map();
  const walk = (tasks) => {
    for (const t of tasks || []) {
      if (!t || typeof t !== 'object') continue;
      byRef.set(t.taskReferenceName, t);
      for (const lane of t.forkTasks || []) walk(lane);
      for (const k in t.decisionCases || {}) walk(t.decisionCases[k]);
      walk(t.defaultCase);
      walk(t.loopOver);
    }
  };
  walk(def && def.tasks);
  return byRef;
}

// The definition's reference name of a task: inside a DO_WHILE the API shows Conductor's
// "ref__<iteration>".
function baseRef(t) {
  const r = t.referenceTaskName || '';
  const suffix = `__${t.iteration}`;
  return t.iteration > 0 && r.endsWith(suffix) ? r.slice(0, -suffix.length) : r;
}

// One pass over the workflow's tasks: attempts per ref (oldest first; the last one is the
// task's state: highest iteration, then attempt), and the diagram's states.
function indexTasks(wf, defRefs) {
  const byRef = new Map();
  for (const t of wf.tasks || []) {
    const r = baseRef(t);
    let list = byRef.get(r);
    if (!list) byRef.set(r, (list = []));
    list.push(t);
  }
  const order = (a, b) => ((a.iteration || 0) - (b.iteration || 0)) || ((a.retryCount || 0) - (b.retryCount || 0)) || ((a.seq || 0) - (b.seq || 0));
  const states = new Map();
  const statusOf = new Map();
  for (const [ref, list] of byRef) {
    if (list.length > 1) list.sort(order);
    const last = list[list.length - 1];
    statusOf.set(ref, last.status);
    states.set(ref, {
      status: last.status, attempts: list.length, iteration: last.iteration || 0,
      subWorkflowId: last.subWorkflowId || null, reason: last.reasonForIncompletion || null, taskId: last.taskId,
    });
  }
  const children = new Map();  // dynamic fork ref -> [child refs]
  for (const [ref, d] of defRefs) {
    const st = states.get(ref);
    if (!st) continue;
    const type = String(d.type || '').toUpperCase();
    const last = byRef.get(ref)[byRef.get(ref).length - 1];
    if (type === 'SWITCH' || type === 'DECISION') {
      const r = last.outputData && last.outputData.evaluationResult;
      const v = Array.isArray(r) ? r[0] : r;
      if (v !== undefined && v !== null && last.status === 'COMPLETED') {
        st.taken = Object.prototype.hasOwnProperty.call(d.decisionCases || {}, String(v)) ? String(v) : '\u0000default';
      }
    } else if (type === 'DO_WHILE') {
      const it = last.outputData && Number(last.outputData.iteration);
      let max = 0;
      for (const b of loopBodyRefs(d)) {
        const s = states.get(b);
        if (s && s.iteration > max) max = s.iteration;
      }
      st.count = Math.max(Number.isFinite(it) ? it : 0, max);
    } else if (type === 'FORK_JOIN_DYNAMIC') {
      let kids = last.outputData && Array.isArray(last.outputData.forkedTasks) ? last.outputData.forkedTasks : null;
      if (!kids) {
        const p = last.inputData && last.inputData[d.dynamicForkTasksParam || 'dynamicTasks'];
        if (Array.isArray(p)) kids = p.map((x) => x && x.taskReferenceName).filter(Boolean);
      }
      kids = kids || [];
      children.set(ref, kids);
      const counts = {};
      for (const k of kids) {
        const s = statusOf.get(k);
        if (s) counts[s] = (counts[s] || 0) + 1;
      }
      st.counts = counts;
      st.count = kids.length;
    }
  }
  return { byRef, states, children };
}

function loopBodyRefs(d) {
  const out = [];
  const walk = (tasks) => {
    for (const t of tasks || []) {
      out.push(t.taskReferenceName);
      for (const lane of t.forkTasks || []) walk(lane);
      for (const k in t.decisionCases || {}) walk(t.decisionCases[k]);
      walk(t.defaultCase);
      walk(t.loopOver);
    }
  };
  walk(d.loopOver);
  return out;
}

// With no definition (deleted since), draw the refs that ran, in order, as a chain.
function definitionFromTasks(wf) {
  const seen = new Set();
  const tasks = [];
  for (const t of (wf.tasks || []).slice().sort((a, b) => (a.seq || 0) - (b.seq || 0))) {
    const ref = baseRef(t);
    if (seen.has(ref)) continue;
    seen.add(ref);
    tasks.push({ name: t.taskDefName || t.taskType, taskReferenceName: ref, type: /^[A-Z_]+$/.test(t.taskType) ? t.taskType : 'SIMPLE' });
  }
  return { name: wf.workflowName, version: wf.workflowVersion, tasks };
}

// ---------------------------------------------------------------- dialogs with fields

// A modal <dialog> with fields; resolves to the values, or null when cancelled.
function formDialog({ title, message, fields, confirmLabel = 'Confirm', validate }) {
  return new Promise((resolve) => {
    const dlg = el('dialog', { class: 'ex-dialog', 'aria-labelledby': 'ex-dlg-title' });
    const form = el('form', { method: 'dialog', class: 'confirm-form' });
    form.appendChild(el('h2', { id: 'ex-dlg-title' }, title));
    if (message) form.appendChild(el('p', null, message));
    const controls = {};
    let n = 0;
    for (const f of fields) {
      const id = `ex-f-${++n}`;
      let c;
      if (f.kind === 'select') {
        c = el('select', { id, name: f.name });
        for (const o of f.options) {
          const opt = el('option', { value: o.value }, o.label);
          if (o.value === f.value) opt.selected = true;
          c.appendChild(opt);
        }
        if (f.onChange) c.addEventListener('change', () => f.onChange(c.value, controls));
      } else if (f.kind === 'textarea') {
        c = el('textarea', { id, name: f.name, rows: f.rows || 4, spellcheck: 'false' });
        c.value = f.value || '';
      } else {
        c = el('input', { id, name: f.name, type: 'text', autocomplete: 'off' });
        c.value = f.value || '';
      }
      if (f.required) c.required = true;
      controls[f.name] = c;
      const wrap = el('div', { class: 'field ex-field' }, el('label', { for: id }, f.label), c);
      if (f.hint) wrap.appendChild(el('span', { class: 'muted small' }, f.hint));
      form.appendChild(wrap);
    }
    const err = el('p', { class: 'form-error', role: 'alert' });
    form.appendChild(err);
    const cancel = el('button', { type: 'submit', value: 'cancel', class: 'btn', formnovalidate: true }, 'Cancel');
    const ok = el('button', { type: 'submit', value: 'confirm', class: 'btn btn-primary' }, confirmLabel === 'Confirm' ? 'Confirm' : confirmLabel);
    form.appendChild(el('div', { class: 'dialog-actions' }, cancel, ok));
    dlg.appendChild(form);
    form.addEventListener('submit', (e) => {
      if (e.submitter !== ok) return;
      const values = {};
      for (const k in controls) values[k] = controls[k].value;
      const problem = validate ? validate(values) : null;
      if (problem) { e.preventDefault(); err.textContent = problem; }
    });
    dlg.addEventListener('close', () => {
      const values = {};
      for (const k in controls) values[k] = controls[k].value;
      dlg.remove();
      resolve(dlg.returnValue === 'confirm' ? values : null);
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    const first = form.querySelector('select, input, textarea');
    if (first) first.focus();
  });
}

// ---------------------------------------------------------------- the page

export default {
  title: 'Execution',
  async mount(root, params, ctx) {
    const t0 = performance.now();
    const id = params.id;
    const api = ctx.api;
    const base = `/api/workflow/${encodeURIComponent(id)}`;
    root.classList.add('ex-page');

    let closed = false;
    let wf = null;
    let def = null;
    let defRefs = new Map();
    let idx = null;
    let svg = null;
    let viewer = null;
    let selected = null;          // selected ref
    let detailSig = '';
    let tl = null;                // timeline, made when its tab is first shown
    let tlDirty = true;
    let ioDirty = true;
    let stream = null;
    let lastSeq = 0;
    const events = [];
    let historyReady = false;
    let historyRendered = 0;
    let fitGrid = () => {};
    let durationEl = null;
    // a running workflow's duration ticks
    const clock = setInterval(() => {
      if (!wf || !durationEl || TERMINAL.has(wf.status) || msOf(wf.endTime)) return;
      const st = msOf(wf.startTime || wf.createTime);
      if (st) durationEl.textContent = `${fmtDuration(Date.now() - st)} so far`;
    }, 1000);
    let histRaf = 0;

    root.appendChild(el('p', { class: 'muted', 'aria-live': 'polite' }, 'Loading execution…'));
    try {
      wf = await api.get(base);
    } catch (e) {
      root.textContent = '';
      root.appendChild(el('div', { class: 'notice notice-error', role: 'alert' },
        e.status === 404 ? `No execution ${id}.` : `Cannot load execution ${id}: ${e.message}`));
      root.appendChild(el('p', null, el('a', { href: '#/executions' }, '← All executions')));
      clearInterval(clock);
      return undefined;
    }
    try {
      def = await api.get(`/api/metadata/workflow/${encodeURIComponent(wf.workflowName)}`, { version: wf.workflowVersion });
    } catch (e) {
      def = null;
      ctx.toast(`The definition ${wf.workflowName} v${wf.workflowVersion} is not available (${e.message}); the diagram shows the tasks that ran.`, 'error');
    }
    if (closed) return undefined;
    const diagramDef = def && Array.isArray(def.tasks) ? def : definitionFromTasks(wf);
    document.title = `${wf.workflowName} ${String(id).slice(0, 8)}… · nodeflow`;
    defRefs = indexDefinition(diagramDef);
    idx = indexTasks(wf, defRefs);
    root.textContent = '';

    // ---- header
    const statusBadge = badge(wf.status, { 'data-testid': 'workflow-status', 'aria-live': 'polite' });
    const liveNote = el('span', { class: 'ex-live muted small' });
    const title = el('h1', null, el('span', { class: 'ex-name' }, wf.workflowName),
      el('span', { class: 'ex-version' }, ` v${wf.workflowVersion}`));
    const metaList = el('dl', { class: 'ex-meta' });
    const reasonBox = el('div', { class: 'notice notice-error ex-reason', role: 'note' });
    const head = el('div', { class: 'page-head ex-head' },
      el('div', { class: 'ex-titlebox' },
        el('div', { class: 'ex-crumbs small' }, el('a', { href: '#/executions' }, 'Executions'), ' / ', el('span', { class: 'mono' }, id)),
        el('div', { class: 'ex-titleline' }, title, statusBadge, liveNote)));
    const actionsBar = el('div', { class: 'ex-actions', role: 'group', 'aria-label': 'Operator actions' });
    head.appendChild(actionsBar);
    root.append(head, metaList, reasonBox);

    function renderHeader() {
      statusBadge.textContent = wf.status;
      statusBadge.className = `badge st-${String(wf.status).toLowerCase()}`;
      metaList.textContent = '';
      const add = (k, v) => metaList.append(el('div', { class: 'ex-meta-item' }, el('dt', null, k), el('dd', null, v)));
      const copyId = el('button', { type: 'button', class: 'btn-link small ex-copy-id', 'aria-label': 'Copy the workflow id' }, 'copy');
      copyId.addEventListener('click', async () => {
        try { await navigator.clipboard.writeText(wf.workflowId); copyId.textContent = 'copied'; } catch { copyId.textContent = 'copy failed'; }
        setTimeout(() => { copyId.textContent = 'copy'; }, 1500);
      });
      add('Workflow id', [el('code', null, wf.workflowId), ' ', copyId]);
      add('Started', timeEl(wf.startTime || wf.createTime));
      add('Ended', timeEl(wf.endTime));
      const st = msOf(wf.startTime || wf.createTime);
      const en = msOf(wf.endTime);
      durationEl = el('span', null, st ? `${fmtDuration((en || Date.now()) - st)}${en ? '' : ' so far'}` : '—');
      add('Duration', durationEl);
      add('Correlation id', wf.correlationId ? el('code', null, wf.correlationId) : el('span', { class: 'muted' }, '—'));
      if (wf.parentWorkflowId) add('Parent', el('a', { href: `#/executions/${encodeURIComponent(wf.parentWorkflowId)}`, class: 'mono' }, wf.parentWorkflowId));
      const n = (wf.tasks || []).length;
      add('Tasks', `${idx.byRef.size.toLocaleString()} task${idx.byRef.size === 1 ? '' : 's'}, ${n.toLocaleString()} attempt${n === 1 ? '' : 's'}`);
      if (wf.priority) add('Priority', String(wf.priority));
      const reason = wf.reasonForIncompletion;
      const wasHidden = reasonBox.hidden;
      reasonBox.hidden = !reason;
      if (wasHidden !== reasonBox.hidden) requestAnimationFrame(() => fitGrid());
      reasonBox.textContent = '';
      if (reason) reasonBox.append(el('strong', null, 'Reason: '), String(reason));
      if (wf.failedReferenceTaskNames && wf.failedReferenceTaskNames.length && reason) {
        reasonBox.append(el('br'), el('span', { class: 'small' }, `Failed tasks: ${wf.failedReferenceTaskNames.join(', ')}`));
      }
    }

    // ---- actions
    const role = ctx.me && ctx.me.role ? ctx.me.role : 'admin';
    const canAct = role === 'admin' || role === 'operator';
    const waitingTasks = () => {
      const out = [];
      for (const [ref, list] of idx.byRef) {
        const last = list[list.length - 1];
        if (String(last.taskType).toUpperCase() === 'WAIT' && last.status === 'IN_PROGRESS') out.push(last);
      }
      return out;
    };
    const latestAttempts = () => {
      const out = [];
      for (const [, list] of idx.byRef) out.push(list[list.length - 1]);
      return out.sort((a, b) => (a.seq || 0) - (b.seq || 0));
    };

    async function send(label, fn, okText) {
      try {
        const res = await fn(crypto.randomUUID());
        ctx.toast(okText(res), 'ok');
      } catch (e) {
        ctx.toast(`${label} failed: ${e.message}${e.status ? ` (${e.status})` : ''}`, 'error');
      }
      if (!closed) { await refresh(); ensureStream(); }
    }

    const ACTIONS = [
      {
        label: 'Pause', applies: (s) => s === 'RUNNING', when: 'only a RUNNING workflow can be paused',
        async run() {
          if (!await ctx.confirm(`Pause ${wf.workflowName} ${id}? Running tasks finish; nothing new is scheduled until it is resumed.`, { confirmLabel: 'Pause' })) return;
          await send('Pause', (rid) => api.put(`${base}/pause`, undefined, { requestId: rid }), () => 'Paused');
        },
      },
      {
        label: 'Resume', applies: (s) => s === 'PAUSED', when: 'only a PAUSED workflow can be resumed',
        async run() {
          if (!await ctx.confirm(`Resume ${wf.workflowName} ${id}?`, { confirmLabel: 'Resume' })) return;
          await send('Resume', (rid) => api.put(`${base}/resume`, undefined, { requestId: rid }), () => 'Resumed');
        },
      },
      {
        label: 'Terminate', danger: true, applies: (s) => s === 'RUNNING' || s === 'PAUSED', when: 'only a RUNNING or PAUSED workflow can be terminated',
        async run() {
          const v = await formDialog({
            title: 'Terminate the workflow?',
            message: `Terminate ${wf.workflowName} ${id}? Its running tasks are canceled.`,
            fields: [{ name: 'reason', label: 'Reason', kind: 'textarea', rows: 3, value: '', hint: 'Recorded as its reasonForIncompletion' }],
          });
          if (!v) return;
          const reason = v.reason.trim() || undefined;
          await send('Terminate', (rid) => api.del(base, { reason }, { requestId: rid }), () => 'Terminated');
        },
      },
      {
        label: 'Retry', applies: (s) => s === 'FAILED' || s === 'TIMED_OUT' || s === 'TERMINATED', when: 'only a FAILED, TIMED_OUT or TERMINATED workflow can be retried',
        async run() {
          if (!await ctx.confirm(`Retry the failed tasks of ${wf.workflowName} ${id}?`, { confirmLabel: 'Retry' })) return;
          await send('Retry', (rid) => api.post(`${base}/retry`, undefined, { requestId: rid }), () => 'Retried: the workflow runs again');
        },
      },
      {
        label: 'Restart', applies: (s) => TERMINAL.has(s), when: 'only an ended workflow can be restarted',
        async run() {
          if (!await ctx.confirm(`Restart ${wf.workflowName} ${id} from the start, with the same id and input? Its task history is replaced.`, { confirmLabel: 'Restart' })) return;
          await send('Restart', (rid) => api.post(`${base}/restart`, undefined, { requestId: rid }), () => 'Restarted');
        },
      },
      {
        label: 'Rerun from task', applies: (s) => TERMINAL.has(s), when: 'only an ended workflow can be rerun from a task',
        async run() {
          const tasks = latestAttempts();
          if (!tasks.length) { ctx.toast('This workflow has no task to rerun from.', 'error'); return; }
          const pre = selected && idx.byRef.get(selected);
          const preId = pre ? pre[pre.length - 1].taskId : tasks[0].taskId;
          const options = tasks.slice(0, 2000).map((t) => ({
            value: t.taskId,
            label: `${t.referenceTaskName} · ${t.status}`,
          }));
          const v = await formDialog({
            title: 'Rerun from a task?',
            message: `Run ${wf.workflowName} ${id} again from this task (the tasks after it run again):`,
            fields: [{ name: 'task', label: 'Task', kind: 'select', options, value: preId }],
          });
          if (!v) return;
          await send('Rerun', (rid) => api.post(`${base}/rerun`, { reRunFromTaskId: v.task }, { requestId: rid }), () => 'Rerun started');
        },
      },
      {
        label: 'Signal', applies: (s) => !TERMINAL.has(s) && waitingTasks().length > 0, when: 'no WAIT task is waiting',
        async run() {
          const waits = waitingTasks();
          const sigOf = (t) => (t.inputData && (t.inputData.signal || t.inputData.signalName)) || '';
          const options = waits.map((t) => ({ value: t.taskId, label: `${t.referenceTaskName}${sigOf(t) ? ` — waits for "${sigOf(t)}"` : ''}` }));
          const fields = [];
          if (options.length) {
            fields.push({
              name: 'wait', label: 'Waiting task', kind: 'select', options, value: options[0].value,
              onChange: (val, c) => { const t = waits.find((w) => w.taskId === val); if (t && sigOf(t)) c.name.value = sigOf(t); },
            });
          }
          fields.push({ name: 'name', label: 'Signal name', value: waits.length ? sigOf(waits[0]) : '', required: true });
          fields.push({ name: 'payload', label: 'Payload (JSON)', kind: 'textarea', rows: 5, value: '{}' });
          const v = await formDialog({
            title: 'Send a signal?',
            message: options.length ? `Deliver a signal to ${wf.workflowName} ${id}; it completes the WAIT tasks waiting for that name.`
              : 'No WAIT task is waiting now; the signal may find none.',
            fields,
            validate: (x) => {
              if (!x.name.trim()) return 'A signal name is needed.';
              if (x.payload.trim()) { try { JSON.parse(x.payload); } catch (e) { return `The payload is not JSON: ${e.message}`; } }
              return null;
            },
          });
          if (!v) return;
          const payload = v.payload.trim() ? JSON.parse(v.payload) : null;
          await send('Signal', (rid) => api.post(`${base}/signal/${encodeURIComponent(v.name.trim())}`, payload, { requestId: rid }),
            (r) => (r && r.delivered === false ? `Signal ${v.name.trim()} sent (no task was waiting for it)` : `Signal ${v.name.trim()} delivered`));
        },
      },
    ];
    const rerunAction = ACTIONS.find((a) => a.label === 'Rerun from task');
    for (const a of ACTIONS) {
      a.button = el('button', { type: 'button', class: a.danger ? 'btn btn-danger' : 'btn' }, a.label);
      a.button.addEventListener('click', () => { a.run().catch((e) => ctx.toast(`${a.label} failed: ${e.message}`, 'error')); });
      actionsBar.appendChild(a.button);
    }
    function renderActions() {
      for (const a of ACTIONS) {
        if (!canAct) {
          a.button.disabled = true;
          a.button.title = 'needs the operator role';
          continue;
        }
        const ok = a.applies(wf.status);
        a.button.disabled = !ok;
        a.button.title = ok ? '' : a.when;
        if (ok) a.button.removeAttribute('title');
      }
    }

    // ---- tabs
    const tabs = [
      { key: 'diagram', label: 'Diagram' },
      { key: 'timeline', label: 'Timeline' },
      { key: 'io', label: 'Input / Output' },
      { key: 'history', label: 'History' },
    ];
    const tablist = el('div', { class: 'ex-tabs', role: 'tablist', 'aria-label': 'Execution views' });
    const panels = el('div', { class: 'ex-panels' });
    let current = null;
    for (const t of tabs) {
      t.tab = el('button', { type: 'button', role: 'tab', id: `ex-tab-${t.key}`, 'aria-controls': `ex-panel-${t.key}`, class: 'ex-tab', 'aria-selected': 'false', tabindex: '-1' }, t.label);
      t.panel = el('section', { role: 'tabpanel', id: `ex-panel-${t.key}`, 'aria-labelledby': `ex-tab-${t.key}`, class: `ex-panel ex-panel-${t.key}`, hidden: true });
      t.tab.addEventListener('click', () => show(t.key));
      t.tab.addEventListener('keydown', (e) => {
        const i = tabs.indexOf(t);
        let j = null;
        if (e.key === 'ArrowRight') j = (i + 1) % tabs.length;
        if (e.key === 'ArrowLeft') j = (i + tabs.length - 1) % tabs.length;
        if (e.key === 'Home') j = 0;
        if (e.key === 'End') j = tabs.length - 1;
        if (j !== null) { e.preventDefault(); show(tabs[j].key); tabs[j].tab.focus(); }
      });
      tablist.appendChild(t.tab);
      panels.appendChild(t.panel);
    }
    const historyTab = tabs[3];
    root.append(tablist, panels);
    function show(key) {
      current = key;
      for (const t of tabs) {
        const on = t.key === key;
        t.tab.setAttribute('aria-selected', String(on));
        t.tab.tabIndex = on ? 0 : -1;
        t.panel.hidden = !on;
      }
      if (key === 'diagram') fitGrid();
      if (key === 'timeline') renderTimeline();
      if (key === 'io') renderIO();
      if (key === 'history') renderHistory();
    }

    // ---- diagram + task details
    const dPanel = tabs[0].panel;
    const dGrid = el('div', { class: 'ex-diagram-grid' });
    const detail = el('aside', { class: 'ex-detail card', 'aria-label': 'Selected task', 'aria-live': 'polite' });
    dPanel.appendChild(dGrid);
    viewer = diagramViewer(null);
    dGrid.append(viewer.el, detail);
    const followBox = el('input', { type: 'checkbox', id: 'ex-follow' });
    followBox.checked = true;
    const followWrap = el('label', { class: 'ex-follow small', for: 'ex-follow' }, followBox, ' Follow the running task');
    viewer.el.querySelector('.dg-toolbar').appendChild(followWrap);
    const revealActive = () => {
      for (const [ref, st] of idx.states) {
        if ((st.status === 'IN_PROGRESS' || st.status === 'SCHEDULED') && svg && svg._nodes.has(ref)) { viewer.reveal(ref); return; }
      }
    };

    // ---- timeline
    function renderTimeline() {
      if (current !== 'timeline' || !tlDirty) return;
      tlDirty = false;
      if (!tl) {
        tl = timeline(wf.tasks || [], { start: wf.startTime || wf.createTime, end: wf.endTime, onSelect: (t) => { show('diagram'); select(baseRef(t), t.taskId); } });
        tabs[1].panel.appendChild(tl.el);
        tl.refresh();
      } else {
        tl.update(wf.tasks || [], { start: wf.startTime || wf.createTime, end: wf.endTime });
      }
    }

    // ---- input / output / variables
    function renderIO() {
      if (current !== 'io' || !ioDirty) return;
      ioDirty = false;
      const p = tabs[2].panel;
      p.textContent = '';
      const grid = el('div', { class: 'ex-io-grid' });
      for (const [label, value] of [['Input', wf.input], ['Output', wf.output], ['Variables', wf.variables]]) {
        grid.appendChild(el('div', { class: 'card card-pad ex-io' }, el('h2', null, label), jsonView(value ?? null, { collapsedDepth: 2, label })));
      }
      if (wf.taskToDomain && Object.keys(wf.taskToDomain).length) {
        grid.appendChild(el('div', { class: 'card card-pad ex-io' }, el('h2', null, 'Task to domain'), jsonView(wf.taskToDomain, { label: 'Task to domain' })));
      }
      p.appendChild(grid);
    }

    // ---- history
    const hCount = el('p', { class: 'muted small ex-hist-count' });
    const hTable = el('table', { class: 'data ex-history' },
      el('caption', { class: 'ex-sr' }, 'The execution\'s events in order'),
      el('colgroup', null, el('col', { class: 'c-seq' }), el('col', { class: 'c-time' }), el('col', { class: 'c-type' }), el('col', { class: 'c-task' }), el('col', { class: 'c-det' })),
      el('thead', null, el('tr', null, ...['Seq', 'Time', 'Event', 'Task', 'Details'].map((c) => el('th', { scope: 'col' }, c)))));
    const hBody = el('tbody');
    hTable.appendChild(hBody);
    const hHead = el('div', { class: 'ex-hist-head' }, hCount);
    historyTab.panel.append(hHead, el('div', { class: 'table-wrap ex-history-wrap' }, hTable));
    function eventRow(ev) {
      const type = String(ev.type || '');
      let cls = '';
      if (/FAILED|TIMED_OUT|TERMINATED/.test(type)) cls = 'ev-bad';
      else if (/COMPLETED/.test(type)) cls = 'ev-good';
      const payload = compact(ev.payload, 180);
      const det = el('td', { class: 'mono small ex-ev-payload' }, payload);
      if (payload.endsWith('…')) det.title = compact(ev.payload, 4000);
      return el('tr', { class: cls },
        el('td', { class: 'num' }, String(ev.seq)),
        el('td', { class: 'mono small nowrap' }, el('time', { datetime: msOf(ev.at) ? new Date(msOf(ev.at)).toISOString() : '' , title: absTime(ev.at) }, clockTime(ev.at))),
        el('td', { class: 'nowrap' }, el('span', { class: 'ex-ev-type' }, type)),
        el('td', null, ev.taskRef ? el('button', { type: 'button', class: 'btn-link', onclick: () => { show('diagram'); select(ev.taskRef); } }, ev.taskRef) : ''),
        det);
    }
    // pages of HIST_PAGE events (a table of thousands of rows lays out slowly); the last
    // page follows the live events
    const HIST_PAGE = 250;
    let hFrom = null;                    // first event shown; null: the latest page (follows)
    let hShown = '';
    const hNav = el('div', { class: 'pager ex-hist-pager', role: 'group', 'aria-label': 'History pages' });
    const navBtn = (label, aria, fn) => {
      const b = el('button', { type: 'button', class: 'btn btn-small', 'aria-label': aria }, label);
      b.addEventListener('click', fn);
      hNav.appendChild(b);
      return b;
    };
    // a filter on the event type or the task's reference name
    let hFilter = '';
    let hList = events;                 // the events shown (all, or those matching the filter)
    let hListLen = -1;
    const filterInput = el('input', { type: 'search', id: 'ex-hist-filter', class: 'ex-hist-filter', placeholder: 'type or task, e.g. FAILED', autocomplete: 'off', spellcheck: 'false' });
    hHead.appendChild(el('div', { class: 'ex-hist-filterbox' }, el('label', { for: 'ex-hist-filter', class: 'small' }, 'Filter events'), filterInput));
    let filterTimer = 0;
    filterInput.addEventListener('input', () => {
      clearTimeout(filterTimer);
      filterTimer = setTimeout(() => { hFilter = filterInput.value.trim().toLowerCase(); hListLen = -1; hFrom = null; renderHistory(); }, 150);
    });
    const matches = (ev) => String(ev.type || '').toLowerCase().includes(hFilter) || String(ev.taskRef || '').toLowerCase().includes(hFilter);
    const shownList = () => {
      if (!hFilter) return events;
      if (hListLen !== events.length) {
        // new events since the last filtering: filter only those
        if (hListLen < 0 || hList === events) hList = events.filter(matches);
        else for (let i = hListLen; i < events.length; i++) if (matches(events[i])) hList.push(events[i]);
        hListLen = events.length;
      }
      return hList;
    };
    const latestFrom = () => Math.max(0, shownList().length - HIST_PAGE);
    const curFrom = () => (hFrom === null ? latestFrom() : Math.min(hFrom, latestFrom()));
    const bFirst = navBtn('« First', 'First page of events', () => { hFrom = 0; renderHistory(); });
    const bPrev = navBtn('‹ Earlier', 'Earlier events', () => { hFrom = Math.max(0, curFrom() - HIST_PAGE); renderHistory(); });
    const hPos = el('span', { class: 'ex-hist-pos' });
    hNav.appendChild(hPos);
    const bNext = navBtn('Later ›', 'Later events', () => { const f = curFrom() + HIST_PAGE; hFrom = f >= latestFrom() ? null : f; renderHistory(); });
    const bLast = navBtn('Latest »', 'Latest events (follows new ones)', () => { hFrom = null; renderHistory(); });
    hHead.appendChild(hNav);
    function renderHistory() {
      historyTab.tab.textContent = `History (${events.length.toLocaleString()})`;
      const list = shownList();
      hCount.textContent = historyReady
        ? `${hFilter ? `${list.length.toLocaleString()} of ` : ''}${events.length.toLocaleString()} event${events.length === 1 ? '' : 's'}${stream ? ' · live' : ''}`
        : 'Loading the history…';
      if (current !== 'history') return;
      const from = curFrom();
      const to = Math.min(list.length, from + HIST_PAGE);
      const key = `${hFilter}\u0000${from}`;
      if (hShown !== key) {
        hBody.textContent = '';
        historyRendered = from;
        hShown = key;
      }
      if (historyRendered < to) {
        const frag = document.createDocumentFragment();
        for (let i = historyRendered; i < to; i++) frag.appendChild(eventRow(list[i]));
        hBody.appendChild(frag);
        historyRendered = to;
      }
      hPos.textContent = list.length ? `${(from + 1).toLocaleString()}–${to.toLocaleString()} of ${list.length.toLocaleString()}` : 'no events';
      bFirst.disabled = bPrev.disabled = from === 0;
      bNext.disabled = bLast.disabled = to >= list.length;
      hNav.hidden = list.length <= HIST_PAGE;
    }

    // ---- task details (the selected node)
    function attemptView(t, open) {
      const d = el('details', { class: 'ex-attempt', 'data-task-id': t.taskId });
      const dur = msOf(t.startTime) ? fmtDuration((msOf(t.endTime) || Date.now()) - msOf(t.startTime)) : '';
      d.appendChild(el('summary', null,
        el('span', { class: 'ex-att-n' }, `Attempt #${(t.retryCount || 0) + 1}`),
        t.iteration ? el('span', { class: 'muted small' }, ` · iteration ${t.iteration}`) : null,
        ' ', badge(t.status), dur ? el('span', { class: 'muted small' }, ` ${dur}`) : null));
      let built = false;
      const build = () => {
        if (built) return;
        built = true;
        const dl = el('dl', { class: 'ex-att-meta' });
        const add = (k, v) => { if (v !== null && v !== undefined && v !== '') dl.append(el('dt', null, k), el('dd', null, v)); };
        add('Task id', el('code', null, t.taskId));
        add('Type', t.taskType);
        add('Scheduled', clockTime(t.scheduledTime) || null);
        add('Started', clockTime(t.startTime) || null);
        add('Ended', clockTime(t.endTime) || null);
        if (msOf(t.scheduledTime) && msOf(t.startTime)) add('Queued', fmtDuration(msOf(t.startTime) - msOf(t.scheduledTime)));
        add('Worker', t.workerId || null);
        add('Poll count', t.pollCount ? String(t.pollCount) : null);
        if (t.subWorkflowId) add('Child', el('a', { href: `#/executions/${encodeURIComponent(t.subWorkflowId)}`, class: 'mono' }, t.subWorkflowId));
        if (t.reasonForIncompletion) add('Reason', el('span', { class: 'ex-att-reason' }, String(t.reasonForIncompletion)));
        d.appendChild(dl);
        d.appendChild(el('h3', null, 'Input'));
        d.appendChild(jsonView(t.inputData ?? null, { collapsedDepth: 1, label: 'Input' }));
        d.appendChild(el('h3', null, 'Output'));
        d.appendChild(jsonView(t.outputData ?? null, { collapsedDepth: 1, label: 'Output' }));
      };
      d.addEventListener('toggle', () => { if (d.open) build(); });
      if (open) { build(); d.open = true; }
      return d;
    }

    function chunked(container, items, make, chunk, moreLabel) {
      let shown = 0;
      const more = el('button', { type: 'button', class: 'btn btn-small ex-more' });
      const step = () => {
        const frag = document.createDocumentFragment();
        const stop = Math.min(items.length, shown + chunk);
        for (let i = shown; i < stop; i++) frag.appendChild(make(items[i], i));
        shown = stop;
        container.appendChild(frag);
        if (shown < items.length) { more.textContent = moreLabel(items.length - shown); container.after(more); } else more.remove();
      };
      more.addEventListener('click', step);
      step();
    }

    // focus: a taskId to open, or a Set of taskIds (those open before a live re-render)
    function renderDetail(focus) {
      detail.textContent = '';
      if (!selected) {
        detail.appendChild(el('h2', null, 'Tasks'));
        detail.appendChild(el('p', { class: 'muted' }, 'Select a task in the diagram to see its attempts, input and output.'));
        const counts = {};
        for (const [, list] of idx.byRef) { const s = list[list.length - 1].status; counts[s] = (counts[s] || 0) + 1; }
        const ul = el('ul', { class: 'ex-counts' });
        for (const k of Object.keys(counts).sort()) ul.appendChild(el('li', null, badge(k), ` ${counts[k].toLocaleString()}`));
        if (ul.firstChild) detail.appendChild(ul);
        // what an operator looks for first: what failed, what runs now
        for (const [title, want] of [['Failed', /FAILED|TIMED_OUT/], ['Running now', /IN_PROGRESS|SCHEDULED/]]) {
          const hits = [];
          for (const [ref, list] of idx.byRef) {
            const last = list[list.length - 1];
            if (want.test(String(last.status))) hits.push(last);
          }
          if (!hits.length) continue;
          hits.sort((a, b) => (a.seq || 0) - (b.seq || 0));
          detail.appendChild(el('h3', null, `${title} (${hits.length.toLocaleString()})`));
          const tl2 = el('ul', { class: 'ex-tasklist' });
          for (const t of hits.slice(0, 24)) {
            tl2.appendChild(el('li', null, el('button', { type: 'button', class: 'btn-link', onclick: () => select(baseRef(t)) }, t.referenceTaskName), ' ', badge(t.status)));
          }
          detail.appendChild(tl2);
          if (hits.length > 24) detail.appendChild(el('p', { class: 'muted small' }, `and ${(hits.length - 24).toLocaleString()} more`));
        }
        detailSig = '';
        return;
      }
      const list = idx.byRef.get(selected) || [];
      const d = defRefs.get(selected);
      const last = list[list.length - 1];
      const type = d ? String(d.type || 'SIMPLE').toUpperCase() : (last ? last.taskType : '');
      const hdr = el('div', { class: 'ex-detail-head' },
        el('h2', null, selected), last ? badge(last.status) : el('span', { class: 'badge st-none' }, 'NOT REACHED'));
      const close = el('button', { type: 'button', class: 'btn btn-small ex-detail-close', 'aria-label': 'Close the task details' }, '×');
      close.addEventListener('click', () => select(null));
      hdr.appendChild(close);
      detail.appendChild(hdr);
      const sub = [type];
      if (d && d.name && d.name !== selected) sub.push(d.name);
      if (list.length) sub.push(`${list.length} attempt${list.length === 1 ? '' : 's'}`);
      detail.appendChild(el('p', { class: 'muted small' }, sub.join(' · ')));
      if (d && d.description) detail.appendChild(el('p', { class: 'small' }, d.description));
      if (last && last.subWorkflowId) {
        detail.appendChild(el('p', null, 'Child execution: ', el('a', { href: `#/executions/${encodeURIComponent(last.subWorkflowId)}`, class: 'mono' }, last.subWorkflowId)));
      }
      if (list.length && TERMINAL.has(wf.status)) {
        const rr = el('button', { type: 'button', class: 'btn btn-small' }, 'Rerun from this task…');
        if (!canAct) { rr.disabled = true; rr.title = 'needs the operator role'; }
        rr.addEventListener('click', () => { rerunAction.run().catch((e) => ctx.toast(`Rerun failed: ${e.message}`, 'error')); });
        detail.appendChild(el('p', null, rr));
      }
      if (!list.length) {
        detail.appendChild(el('p', { class: 'muted' }, d ? 'Not reached yet.' : 'No attempts.'));
      } else {
        detail.appendChild(el('h3', null, 'Attempts (newest first)'));
        const ol = el('div', { class: 'ex-attempts' });
        detail.appendChild(ol);
        const newest = list.slice().reverse();
        const isOpen = (t, i) => {
          if (focus instanceof Set) return focus.has(t.taskId) || (i === 0 && !list.some((x) => focus.has(x.taskId)));
          return focus ? t.taskId === focus : i === 0;
        };
        chunked(ol, newest, (t, i) => attemptView(t, isOpen(t, i)), ATTEMPTS_CHUNK,
          (n) => `Show ${Math.min(n, ATTEMPTS_CHUNK)} older (${n.toLocaleString()} left)`);
      }
      const kids = idx.children.get(selected);
      if (kids && kids.length) {
        detail.appendChild(el('h3', null, `Dynamic children (${kids.length.toLocaleString()})`));
        const ul = el('ul', { class: 'ex-children' });
        detail.appendChild(ul);
        // the ones that need a look first: failed, then running, waiting, not started, done
        const rank = (k) => {
          const kl = idx.byRef.get(k);
          const st = kl ? String(kl[kl.length - 1].status) : '';
          if (/FAILED|TIMED_OUT|CANCELED/.test(st)) return 0;
          if (st === 'IN_PROGRESS') return 1;
          if (st === 'SCHEDULED') return 2;
          if (!st) return 3;
          return 4;
        };
        const sorted = kids.map((k, i) => [rank(k), i, k]).sort((x, y) => (x[0] - y[0]) || (x[1] - y[1])).map((x) => x[2]);
        chunked(ul, sorted, (k) => {
          const kl = idx.byRef.get(k);
          const s = kl ? kl[kl.length - 1].status : null;
          return el('li', null, el('button', { type: 'button', class: 'btn-link', onclick: () => select(k) }, k), ' ', s ? badge(s) : el('span', { class: 'muted small' }, 'not started'));
        }, CHILDREN_CHUNK, (n) => `Show ${Math.min(n, CHILDREN_CHUNK)} more (${n.toLocaleString()} left)`);
      }
      detailSig = signature(selected);
    }
    function signature(ref) {
      const list = idx.byRef.get(ref) || [];
      const last = list[list.length - 1];
      const kids = idx.children.get(ref);
      const st = idx.states.get(ref);
      return `${wf.status}|${list.length}|${last ? `${last.status}|${last.updateTime}` : ''}|${kids ? JSON.stringify(st && st.counts) : ''}`;
    }
    function select(ref, taskId) {
      selected = ref || null;
      selectNode(svg, selected);
      if (selected) viewer.reveal(selected);
      renderDetail(taskId);
    }
    function onNodeActivate(e) {
      const g = e.target.closest && e.target.closest('g.node');
      if (!g || e.target.closest('a')) return;
      followBox.checked = false;      // the user looks at something: stop moving the view
      select(g.getAttribute('data-ref'));
    }

    // ---- refresh (coalesced: one in flight, again after it if events came meanwhile)
    let inflight = false;
    let again = false;
    let lastRefresh = 0;
    async function refresh() {
      if (inflight) { again = true; return; }
      inflight = true;
      try {
        do {
          again = false;
          const wait = lastRefresh + REFRESH_GAP_MS - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (closed) return;
          lastRefresh = Date.now();
          let w;
          try { w = await api.get(base); } catch (e) {
            if (!closed) liveNote.textContent = `refresh failed: ${e.message}`;
            return;
          }
          if (closed) return;
          applyWorkflow(w);
        } while (again && !closed);
      } finally {
        inflight = false;
      }
    }
    function applyWorkflow(w) {
      wf = w;
      idx = indexTasks(wf, defRefs);
      renderHeader();
      renderActions();
      updateStates(svg, idx.states);
      followWrap.hidden = TERMINAL.has(wf.status);
      if (followBox.checked && current === 'diagram' && !TERMINAL.has(wf.status)) revealActive();
      tlDirty = true;
      ioDirty = true;
      renderTimeline();
      renderIO();
      if (selected && signature(selected) !== detailSig) {
        const keep = detail.scrollTop;
        renderDetail(new Set([...detail.querySelectorAll('details.ex-attempt[open]')].map((d) => d.getAttribute('data-task-id'))));
        detail.scrollTop = keep;
      } else if (!selected) {
        renderDetail();
      }
      updateLive();
    }

    // ---- live stream
    function updateLive() {
      liveNote.textContent = '';
      if (stream) liveNote.append(el('span', { class: 'live-dot', 'aria-hidden': 'true' }), 'live');
      else if (TERMINAL.has(wf.status)) liveNote.textContent = 'ended';
    }
    function onEvent(msg) {
      const ev = msg && msg.data;
      if (!ev || typeof ev !== 'object' || typeof ev.seq !== 'number') return;
      if (ev.seq <= lastSeq) return;
      lastSeq = ev.seq;
      events.push(ev);
      if (historyReady && !histRaf) histRaf = requestAnimationFrame(() => { histRaf = 0; if (!closed) renderHistory(); });
      refresh();
    }
    function ensureStream() {
      if (stream || closed || !historyReady) return;
      stream = api.stream(`${base}/events/stream`, onEvent, {
        after: lastSeq,
        onEnd: () => { stream = null; if (!closed) { updateLive(); renderHistory(); if (!TERMINAL.has(wf.status)) refresh(); } },
        onError: (e) => {
          if (e && e.status >= 400 && e.status < 500) { stream = null; if (!closed) { liveNote.textContent = `live updates off: ${e.message}`; } }
        },
      });
      updateLive();
    }
    async function loadHistory() {
      let after = 0;
      try {
        for (let page = 0; page < 1000 && !closed; page++) {
          const res = await api.get(`${base}/events`, { after, limit: 1000 });
          if (closed) return;
          const evs = (res && res.events) || [];
          for (const ev of evs) if (ev.seq > lastSeq) { lastSeq = ev.seq; events.push(ev); }
          const next = res && typeof res.next === 'number' ? res.next : (evs.length ? evs[evs.length - 1].seq : after);
          if (!evs.length || next <= after) break;
          after = next;
        }
      } catch (e) {
        if (!closed) ctx.toast(`Cannot load the history: ${e.message}`, 'error');
      }
      if (closed) return;
      historyReady = true;
      renderHistory();
      ensureStream();
      // catch up with anything that changed while the history loaded
      if (!TERMINAL.has(wf.status)) refresh();
    }

    // ---- first paint
    renderHeader();
    renderActions();
    svg = drawDiagram(diagramDef, idx.states);
    svg.addEventListener('click', onNodeActivate);
    svg.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onNodeActivate(e); } });
    show('diagram');
    viewer.setSvg(svg);
    renderDetail();
    renderHistory();
    // the diagram and its details fill the window below the header (which varies in height)
    const fit = () => {
      if (closed || dPanel.hidden) return;
      const top = dGrid.getBoundingClientRect().top + window.scrollY;
      dGrid.style.height = `${Math.max(420, window.innerHeight - top - 20)}px`;
    };
    fitGrid = fit;
    window.addEventListener('resize', fit);
    fit();
    // open on the active task, if any
    followWrap.hidden = TERMINAL.has(wf.status);
    revealActive();
    root.dataset.renderMs = String(Math.round(performance.now() - t0));
    try { performance.mark('nodeflow:execution-ready'); } catch { /* old browsers */ }
    loadHistory();

    return () => {
      closed = true;
      clearInterval(clock);
      window.removeEventListener('resize', fitGrid);
      if (stream) { stream.close(); stream = null; }
      if (tl) tl.destroy();
      if (histRaf) cancelAnimationFrame(histRaf);
      clearTimeout(filterTimer);
      for (const d of document.querySelectorAll('dialog.ex-dialog')) { try { d.close(); } catch { /* gone */ } }
    };
  },
};
