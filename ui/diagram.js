// nodeflow workflow diagram: a Conductor WorkflowDef drawn as SVG with a recursive block
// layout (each block knows its width and height, then places its children), no library.
// drawDiagram(definition, states) -> <svg>; updateStates(svg, states) recolours in place;
// diagramViewer(svg) wraps it in a scrollable, zoomable, draggable frame.

const NS = 'http://www.w3.org/2000/svg';
const NW = 188;        // node width
const NH = 46;         // node height
const NH_DYN = 60;     // dynamic fork node height (a third line of counts)
const VG = 30;         // vertical gap between blocks (an edge with its arrow)
const HG = 22;         // horizontal gap between lanes
const PAD = 16;        // inner padding of loop frames
const MARGIN = 24;

const TYPE_LABEL = {
  FORK_JOIN: 'fork', FORK_JOIN_DYNAMIC: 'dynamic fork', JOIN: 'join', EXCLUSIVE_JOIN: 'exclusive join',
  SWITCH: 'switch', DECISION: 'decision', DO_WHILE: 'do while', SUB_WORKFLOW: 'sub-workflow',
  WAIT: 'wait', HTTP: 'http', INLINE: 'inline', LAMBDA: 'lambda', TERMINATE: 'terminate',
  SET_VARIABLE: 'set variable', JSON_JQ_TRANSFORM: 'jq transform', EVENT: 'event', HUMAN: 'human',
  SIMPLE: 'worker task', NOOP: 'noop', START_WORKFLOW: 'start workflow', DYNAMIC: 'dynamic',
};
const TYPE_GLYPH = {
  FORK_JOIN: '⋔', FORK_JOIN_DYNAMIC: '⋔', JOIN: '⋈', SWITCH: '◇', DECISION: '◇', DO_WHILE: '↻',
  SUB_WORKFLOW: '❐', WAIT: '◷', HTTP: '⇄', INLINE: 'ƒ', LAMBDA: 'λ', TERMINATE: '■',
  SET_VARIABLE: '=', JSON_JQ_TRANSFORM: 'jq', EVENT: '⚑', HUMAN: '☺',
};

function svgEl(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}

function clip(s, n) {
  s = String(s ?? '');
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

const taskType = (t) => String(t.type || 'SIMPLE').toUpperCase();

// ---------------------------------------------------------------- layout
// A block: {w, h, emit(x, y, out)}; its entry is the middle of its top edge, its exit the
// middle of its bottom edge, so blocks stacked centred join with straight edges.

function seqBlock(tasks) {
  const blocks = [];
  for (let i = 0; i < (tasks || []).length; i++) {
    const t = tasks[i];
    const ty = taskType(t);
    if (ty === 'FORK_JOIN' && tasks[i + 1] && taskType(tasks[i + 1]) === 'JOIN') {
      blocks.push(forkBlock(t, tasks[i + 1]));
      i++;
    } else {
      blocks.push(taskBlock(t));
    }
  }
  if (!blocks.length) return { w: 60, h: 0, empty: true, emit() {} };
  let w = 0;
  let h = 0;
  for (const b of blocks) { w = Math.max(w, b.w); h += b.h; }
  h += VG * (blocks.length - 1);
  return {
    w, h,
    emit(x, y, out) {
      const cx = x + w / 2;
      let cy = y;
      let prevBottom = null;
      for (const b of blocks) {
        if (prevBottom !== null) out.edges.push({ d: `M${cx} ${prevBottom}V${cy}`, arrow: true });
        b.emit(cx - b.w / 2, cy, out);
        prevBottom = cy + b.h;
        cy = prevBottom + VG;
      }
    },
  };
}

function taskBlock(t) {
  const ty = taskType(t);
  if (ty === 'FORK_JOIN') return forkBlock(t, null);
  if (ty === 'SWITCH' || ty === 'DECISION') return switchBlock(t);
  if (ty === 'DO_WHILE') return loopBlock(t);
  const h = ty === 'FORK_JOIN_DYNAMIC' ? NH_DYN : NH;
  return { w: NW, h, emit(x, y, out) { out.nodes.push({ t, ty, x, y, w: NW, h }); } };
}

// Lanes side by side under a head node, merged into a tail (the JOIN node, or a dot).
function lanesLayout(lanes) {
  let w = 0;
  let h = 0;
  for (const l of lanes) { w += l.w; h = Math.max(h, l.h); }
  w += HG * Math.max(0, lanes.length - 1);
  return { w, h };
}

// Many wide lanes wrap into rows (fed by a trunk on the left, drained by one on the right)
// so that a 200-branch fork stays readable instead of 40,000 px wide.
const WRAP_W = 1400;

function branchesBlock(head, lanes, labels, tail, keys = null) {
  const L = lanesLayout(lanes);
  const lab = labels ? 14 : 0;
  const rows = [];
  if (L.w <= WRAP_W * 1.2 || lanes.length < 4) {
    rows.push(lanes.map((_, i) => i));
  } else {
    let cur = [];
    let cw = 0;
    lanes.forEach((l, i) => {
      if (cur.length && cw + HG + l.w > WRAP_W) { rows.push(cur); cur = []; cw = 0; }
      cw += (cur.length ? HG : 0) + l.w;
      cur.push(i);
    });
    if (cur.length) rows.push(cur);
  }
  const multi = rows.length > 1;
  const side = multi ? 20 : 0;
  let inner = 0;
  let yy = NH + VG + lab;
  const info = rows.map((r, k) => {
    const m = lanesLayout(r.map((i) => lanes[i]));
    const it = { lanes: r, w: m.w, h: m.h, top: yy };
    yy += m.h + (k < rows.length - 1 ? VG * 1.5 + lab : 0);
    inner = Math.max(inner, m.w);
    return it;
  });
  const w = Math.max(NW, inner + side * 2);
  const tailTop = yy + VG;
  const h = tailTop + (tail ? NH : 10);
  return {
    w, h,
    emit(x, y, out) {
      const cx = x + w / 2;
      out.nodes.push({ t: head, ty: taskType(head), x: cx - NW / 2, y, w: NW, h: NH });
      const busTop = y + NH + VG / 2;
      const ty2 = y + tailTop;
      const last = info[info.length - 1];
      const busLast = y + last.top + last.h + VG / 2;
      const trunkIn = x + 6;
      const trunkOut = x + w - 6;
      info.forEach((r, k) => {
        const busIn = y + r.top - lab - VG / 2;
        const busOut = y + r.top + r.h + VG / 2;
        const into = k === 0 ? `M${cx} ${y + NH}V${busTop}` : `M${cx} ${y + NH}V${busTop}H${trunkIn}V${busIn}`;
        const outOf = (k === info.length - 1) ? `H${cx}V${ty2}` : `H${trunkOut}V${busLast}H${cx}V${ty2}`;
        let lx = x + side + (inner - r.w) / 2;
        for (const i of r.lanes) {
          const l = lanes[i];
          const lc = lx + l.w / 2;
          const top = y + r.top;
          const tag = keys ? { from: head.taskReferenceName, kase: keys[i] } : {};
          if (l.empty) {
            out.edges.push({ d: `${into}H${lc}V${busOut}${outOf}`, arrow: true, ...tag });
          } else {
            out.edges.push({ d: `${into}H${lc}V${top}`, arrow: true, ...tag });
            l.emit(lx, top, out);
            out.edges.push({ d: `M${lc} ${top + l.h}V${busOut}${outOf}`, arrow: true, ...tag });
          }
          if (labels) out.labels.push({ x: lc + 4, y: busIn + 14, text: labels[i] });
          lx += l.w + HG;
        }
      });
      if (!lanes.length) out.edges.push({ d: `M${cx} ${y + NH}V${ty2}`, arrow: true });
      if (tail) out.nodes.push({ t: tail, ty: taskType(tail), x: cx - NW / 2, y: ty2, w: NW, h: NH });
      else out.dots.push({ x: cx, y: ty2 + 5 });
    },
  };
}

function forkBlock(fork, join) {
  const lanes = (fork.forkTasks || []).map((l) => seqBlock(l));
  return branchesBlock(fork, lanes, null, join);
}

function switchBlock(t) {
  const lanes = [];
  const labels = [];
  const keys = [];
  for (const [k, v] of Object.entries(t.decisionCases || {})) { lanes.push(seqBlock(v)); labels.push(clip(k, 18)); keys.push(k); }
  lanes.push(seqBlock(t.defaultCase || []));
  labels.push('default');
  keys.push('\u0000default');
  return branchesBlock(t, lanes, labels, null, keys);
}

function loopBlock(t) {
  const body = seqBlock(t.loopOver || []);
  const inner = Math.max(NW, body.w);
  const w = inner + (PAD + 14) * 2;        // room on the right for the back edge (and alike on the left)
  const bodyTop = PAD + 16 + NH + VG;
  const h = bodyTop + body.h + VG + PAD / 2;
  return {
    w, h,
    emit(x, y, out) {
      const cx = x + w / 2;
      out.frames.push({ x, y, w, h, ref: t.taskReferenceName });
      const ny = y + PAD + 16;
      out.nodes.push({ t, ty: 'DO_WHILE', x: cx - NW / 2, y: ny, w: NW, h: NH });
      const bt = y + bodyTop;
      if (body.empty) {
        out.edges.push({ d: `M${cx} ${ny + NH}V${bt}`, arrow: false });
      } else {
        out.edges.push({ d: `M${cx} ${ny + NH}V${bt}`, arrow: true });
        body.emit(cx - body.w / 2, bt, out);
      }
      const bb = bt + body.h;
      const backY = bb + VG / 2;
      const rx = x + w - 14;
      out.edges.push({ d: `M${cx} ${bb}V${backY}H${rx}V${ny + NH / 2}H${cx + NW / 2}`, arrow: true, cls: 'back' });
      out.edges.push({ d: `M${cx} ${backY}V${y + h}`, arrow: false });
    },
  };
}

// ---------------------------------------------------------------- drawing

function nodeTitle(n, st) {
  const t = n.t;
  const lines = [`${t.taskReferenceName}  (${n.ty})`];
  if (t.name && t.name !== t.taskReferenceName) lines.push(`name: ${t.name}`);
  if (t.description) lines.push(t.description);
  if (n.ty === 'SUB_WORKFLOW' && t.subWorkflowParam) {
    lines.push(`workflow: ${t.subWorkflowParam.name}${t.subWorkflowParam.version ? ` v${t.subWorkflowParam.version}` : ''}`);
  }
  if (n.ty === 'DO_WHILE' && t.loopCondition) lines.push(`while: ${clip(t.loopCondition, 200)}`);
  if ((n.ty === 'SWITCH' || n.ty === 'DECISION') && (t.expression || t.caseValueParam)) {
    lines.push(`on: ${clip(t.expression || t.caseValueParam, 200)}`);
  }
  if (n.ty === 'JOIN' && Array.isArray(t.joinOn) && t.joinOn.length) lines.push(`joins: ${clip(t.joinOn.join(', '), 200)}`);
  if (t.optional) lines.push('optional');
  lines.push(`status: ${st && st.status ? st.status : 'not reached'}`);
  if (st) {
    if (st.attempts > 1) lines.push(`attempts: ${st.attempts}`);
    if (st.iteration) lines.push(`iteration: ${st.iteration}`);
    if (st.counts) lines.push(`children: ${countsText(st.counts, true)}`);
    if (st.reason) lines.push(`reason: ${clip(st.reason, 300)}`);
  }
  return lines.join('\n');
}

const COUNT_ORDER = ['COMPLETED', 'IN_PROGRESS', 'SCHEDULED', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR',
  'TIMED_OUT', 'CANCELED', 'SKIPPED', 'COMPLETED_WITH_ERRORS'];
const COUNT_SHORT = { COMPLETED: '✓', IN_PROGRESS: '▶', SCHEDULED: '…', FAILED: '✗', FAILED_WITH_TERMINAL_ERROR: '✗!',
  TIMED_OUT: '◷', CANCELED: '⊘', SKIPPED: '↷', COMPLETED_WITH_ERRORS: '✓!' };

function countsText(counts, long) {
  const keys = Object.keys(counts).sort((a, b) => COUNT_ORDER.indexOf(a) - COUNT_ORDER.indexOf(b));
  return keys.filter((k) => counts[k]).map((k) => (long ? `${counts[k]} ${k}` : `${COUNT_SHORT[k] || k} ${counts[k]}`)).join(long ? ', ' : '  ');
}

// states may also come as a plain object {ref: state}
function asMap(states) {
  if (states instanceof Map) return states;
  return new Map(states && typeof states === 'object' ? Object.entries(states) : []);
}

function setText(el, s) { if (el.textContent !== s) el.textContent = s; }

// Everything about a node that depends on its state; used by draw and by updateStates.
function applyState(g, n, st) {
  const status = st && st.status ? String(st.status) : '';
  if (g.getAttribute('data-status') !== status) g.setAttribute('data-status', status);
  let cls = `node kind-${n.ty.toLowerCase()}`;
  if (status) cls += ` st-${status.toLowerCase()}`;
  if (g.classList.contains('selected')) cls += ' selected';
  if (g.classList.contains('dg-busy')) cls += ' dg-busy';
  if (g.getAttribute('class') !== cls) g.setAttribute('class', cls);
  setText(g._title, nodeTitle(n, st));
  const label = `${n.t.taskReferenceName} (${n.ty}), ${status ? status.toLowerCase().replace(/_/g, ' ') : 'not reached'}`;
  if (g.getAttribute('aria-label') !== label) g.setAttribute('aria-label', label);
  if (g._extra) {
    // dynamic children: "432 / 1000 done · 2 failed" and a bar of their states
    const c = (st && st.counts) || {};
    const total = st && st.count ? st.count : Object.values(c).reduce((a, b) => a + b, 0);
    const done = (c.COMPLETED || 0) + (c.COMPLETED_WITH_ERRORS || 0) + (c.SKIPPED || 0);
    const bad = (c.FAILED || 0) + (c.FAILED_WITH_TERMINAL_ERROR || 0) + (c.TIMED_OUT || 0) + (c.CANCELED || 0);
    const run = c.IN_PROGRESS || 0;
    const queued = c.SCHEDULED || 0;
    let s = 'children not forked yet';
    if (total) {
      s = `${done.toLocaleString()} / ${total.toLocaleString()} done${bad ? ` · ${bad.toLocaleString()} failed` : ''}${run ? ` · ${run} running` : ''}`;
      if (s.length > 28) s = `✓ ${done}/${total}${bad ? `  ✗ ${bad}` : ''}${run ? `  ▶ ${run}` : ''}${queued ? `  … ${queued}` : ''}`;
    }
    setText(g._extra, clip(s, 30));
    let x = 14;
    const span = n.w - 28;
    for (const [k, v] of [['done', done], ['bad', bad], ['run', run], ['queued', queued]]) {
      const w = total ? (span * v) / total : 0;
      const r = g._prog[k];
      r.setAttribute('x', x.toFixed(1));
      r.setAttribute('width', Math.max(0, w).toFixed(1));
      x += w;
    }
    g.classList.toggle('dg-busy', run + queued > 0);
  }
  // more than one run (retries, loop iterations): "↻ 3" in the corner
  const runs = st && st.attempts > 1 && n.ty !== 'FORK_JOIN_DYNAMIC' && n.ty !== 'SUB_WORKFLOW' ? `↻ ${st.attempts}` : '';
  if (runs && !g._runs) {
    g._runs = svgEl('text', { x: n.w - 8, y: n.h - 9, 'text-anchor': 'end', class: 'dg-runs' });
    g.appendChild(g._runs);
  }
  if (g._runs) setText(g._runs, runs);
  if (n.ty === 'DO_WHILE' && g._frameLabel) {
    const it = st && (st.count || st.iteration) ? (st.count || st.iteration) : 0;
    setText(g._frameLabel, it ? `loop · ${it} iteration${it === 1 ? '' : 's'}` : 'loop');
  }
  if (n.ty === 'SUB_WORKFLOW') {
    const id = st && st.subWorkflowId;
    if (id && !g._link) {
      const a = svgEl('a', { href: `#/executions/${encodeURIComponent(id)}`, class: 'dg-link' });
      const t = svgEl('text', { x: n.w - 8, y: n.h - 9, 'text-anchor': 'end' });
      t.textContent = 'open ↗';
      const tt = svgEl('title');
      tt.textContent = `child execution ${id}`;
      a.append(tt, t);
      g.appendChild(a);
      g._link = a;
    } else if (id && g._link) {
      const href = `#/executions/${encodeURIComponent(id)}`;
      if (g._link.getAttribute('href') !== href) g._link.setAttribute('href', href);
    } else if (!id && g._link) {
      g._link.remove();
      g._link = null;
    }
  }
}

function drawNode(n, st, frameLabels) {
  const t = n.t;
  const g = svgEl('g', {
    transform: `translate(${n.x},${n.y})`, 'data-ref': t.taskReferenceName || '', 'data-status': '',
    'data-type': n.ty, tabindex: '0', role: 'button',
    'aria-label': `${t.taskReferenceName} (${n.ty})`,
  });
  const title = svgEl('title');
  g.appendChild(title);
  g._title = title;
  if (n.ty === 'FORK_JOIN_DYNAMIC') {
    g.appendChild(svgEl('rect', { x: 8, y: -8, width: n.w, height: n.h, rx: 6, class: 'dg-box dg-stack' }));
    g.appendChild(svgEl('rect', { x: 4, y: -4, width: n.w, height: n.h, rx: 6, class: 'dg-box dg-stack' }));
  }
  g.appendChild(svgEl('rect', { width: n.w, height: n.h, rx: 6, class: 'dg-box' }));
  if (n.ty === 'SUB_WORKFLOW') g.appendChild(svgEl('rect', { x: 3, y: 3, width: n.w - 6, height: n.h - 6, rx: 4, class: 'dg-inner' }));
  g.appendChild(svgEl('rect', { width: 6, height: n.h, rx: 3, class: 'dg-bar' }));
  const name = svgEl('text', { x: 14, y: 19, class: 'dg-ref' });
  name.textContent = clip(t.taskReferenceName, 23);
  g.appendChild(name);
  let sub = TYPE_LABEL[n.ty] || n.ty.toLowerCase();
  if (n.ty === 'SUB_WORKFLOW' && t.subWorkflowParam && t.subWorkflowParam.name) sub = `❐ ${t.subWorkflowParam.name}`;
  else if (n.ty === 'SIMPLE' && t.name && t.name !== t.taskReferenceName) sub = t.name;
  else if (n.ty === 'WAIT' && t.inputParameters && t.inputParameters.signal) sub = `wait · signal ${t.inputParameters.signal}`;
  else if (n.ty === 'WAIT' && t.inputParameters && t.inputParameters.duration) sub = `wait · ${t.inputParameters.duration}`;
  const ty = svgEl('text', { x: 14, y: 36, class: 'dg-type' });
  ty.textContent = clip(sub, n.ty === 'SUB_WORKFLOW' ? 20 : 27);
  g.appendChild(ty);
  const glyph = TYPE_GLYPH[n.ty];
  if (glyph && n.ty !== 'SUB_WORKFLOW') {
    const gl = svgEl('text', { x: n.w - 8, y: 19, 'text-anchor': 'end', class: 'dg-glyph' });
    gl.textContent = glyph;
    g.appendChild(gl);
  }
  if (n.ty === 'FORK_JOIN_DYNAMIC') {
    const ex = svgEl('text', { x: 14, y: 50, class: 'dg-extra' });
    g.appendChild(ex);
    g._extra = ex;
    g.appendChild(svgEl('rect', { x: 14, y: n.h - 6, width: n.w - 28, height: 3, rx: 1.5, class: 'dg-prog-track' }));
    g._prog = {};
    for (const k of ['done', 'bad', 'run', 'queued']) {
      const r = svgEl('rect', { x: 14, y: n.h - 6, width: 0, height: 3, class: `dg-prog dg-prog-${k}` });
      g.appendChild(r);
      g._prog[k] = r;
    }
  }
  if (n.ty === 'DO_WHILE') g._frameLabel = frameLabels.get(t.taskReferenceName) || null;
  g._n = n;
  applyState(g, n, st);
  return g;
}

/** The definition as an SVG element; states: Map ref -> {status, count?, counts?, ...}. */
export function drawDiagram(definition, states = new Map()) {
  states = asMap(states);
  const root = seqBlock((definition && definition.tasks) || []);
  const out = { nodes: [], edges: [], labels: [], frames: [], dots: [] };
  const TERM = 22;   // start and end markers
  const w = Math.max(root.w, NW);
  const x0 = MARGIN + (w - root.w) / 2;
  const y0 = MARGIN + TERM + VG;
  root.emit(x0, y0, out);
  const cx = MARGIN + w / 2;
  const endY = y0 + root.h + (root.empty ? 0 : VG);
  out.edges.push({ d: `M${cx} ${MARGIN + TERM}V${root.empty ? endY : y0}`, arrow: !root.empty });
  if (!root.empty) out.edges.push({ d: `M${cx} ${y0 + root.h}V${endY}`, arrow: true });
  const W = w + MARGIN * 2;
  const H = endY + TERM + MARGIN;

  const svg = svgEl('svg', {
    xmlns: NS, viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'dg-svg', role: 'group',
    'aria-label': `Diagram of ${definition && definition.name ? definition.name : 'the workflow'}`,
  });
  svg._size = { w: W, h: H };
  const defs = svgEl('defs');
  const marker = svgEl('marker', { id: 'dg-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' });
  marker.appendChild(svgEl('path', { d: 'M0 0L10 5L0 10z', class: 'dg-arrowhead' }));
  defs.appendChild(marker);
  svg.appendChild(defs);

  const frag = document.createDocumentFragment();
  const frameLabels = new Map();
  for (const f of out.frames) {
    const fg = svgEl('g', { class: 'dg-frame' });
    fg.appendChild(svgEl('rect', { x: f.x, y: f.y, width: f.w, height: f.h, rx: 10 }));
    const lt = svgEl('text', { x: f.x + 10, y: f.y + 17, class: 'dg-frame-label' });
    lt.textContent = 'loop';
    fg.appendChild(lt);
    frameLabels.set(f.ref, lt);
    frag.appendChild(fg);
  }
  const edges = svgEl('g', { class: 'dg-edges' });
  const caseEdges = new Map();   // switch ref -> [{kase, path}]
  const taken = svgEl('g', { class: 'dg-edges-taken' });   // taken branches drawn on top
  for (const e of out.edges) {
    const p = svgEl('path', { d: e.d, class: e.cls ? `dg-edge ${e.cls}` : 'dg-edge' });
    if (e.arrow) p.setAttribute('marker-end', 'url(#dg-arrow)');
    edges.appendChild(p);
    if (e.from !== undefined) {
      if (!caseEdges.has(e.from)) caseEdges.set(e.from, []);
      caseEdges.get(e.from).push({ kase: e.kase, path: p });
    }
  }
  edges.appendChild(taken);
  svg._caseEdges = caseEdges;
  svg._takenLayer = taken;
  frag.appendChild(edges);
  for (const l of out.labels) {
    const t = svgEl('text', { x: l.x, y: l.y, class: 'dg-case' });
    t.textContent = l.text;
    frag.appendChild(t);
  }
  for (const d of out.dots) frag.appendChild(svgEl('circle', { cx: d.x, cy: d.y, r: 5, class: 'dg-merge' }));
  // start and end markers
  for (const [y, label] of [[MARGIN + TERM / 2, 'start'], [endY + TERM / 2, 'end']]) {
    const g = svgEl('g', { class: `dg-term dg-${label}` });
    g.appendChild(svgEl('rect', { x: cx - 30, y: y - TERM / 2, width: 60, height: TERM, rx: TERM / 2 }));
    const t = svgEl('text', { x: cx, y: y + 4, 'text-anchor': 'middle' });
    t.textContent = label;
    g.appendChild(t);
    frag.appendChild(g);
  }
  const nodes = new Map();
  const ng = svgEl('g', { class: 'dg-nodes' });
  for (const n of out.nodes) {
    const ref = n.t.taskReferenceName;
    const g = drawNode(n, states.get(ref), frameLabels);
    ng.appendChild(g);
    if (ref !== undefined) nodes.set(ref, g);
  }
  frag.appendChild(ng);
  svg.appendChild(frag);
  svg._nodes = nodes;
  markTaken(svg, states);
  // no states at all: a definition, not an execution; nothing is "not reached"
  svg.classList.toggle('dg-nostate', !states || states.size === 0);
  return svg;
}

// The branch a SWITCH took (states.get(ref).taken: its case, or '\u0000default') stands out.
function markTaken(svg, states) {
  for (const [ref, list] of svg._caseEdges) {
    const st = states.get(ref);
    const k = st && st.taken !== undefined && st.taken !== null ? st.taken : null;
    for (const { kase, path } of list) {
      const on = k !== null && kase === k;
      if (on !== path.classList.contains('taken')) {
        path.classList.toggle('taken', on);
        (on ? svg._takenLayer : svg._takenLayer.parentNode).appendChild(path);
      }
    }
  }
}

/** Recolour nodes in place (no redraw): data-status, classes, tooltips, counts, links. */
export function updateStates(svg, states = new Map()) {
  if (!svg || !svg._nodes) return;
  states = asMap(states);
  for (const [ref, g] of svg._nodes) applyState(g, g._n, states.get(ref));
  markTaken(svg, states);
  svg.classList.toggle('dg-nostate', !states || states.size === 0);
}

/** Mark one node as selected (or none with null). */
export function selectNode(svg, ref) {
  if (!svg || !svg._nodes) return;
  for (const g of svg.querySelectorAll('.node.selected')) g.classList.remove('selected');
  const g = ref != null ? svg._nodes.get(ref) : null;
  if (g) g.classList.add('selected');
  return g;
}

/**
 * A frame around the diagram: a toolbar (zoom −, +, fit, 100 %) and a scroll area that can
 * also be dragged. Returns {el, setSvg(svg), reveal(ref)}.
 */
export function diagramViewer(svg) {
  const el = document.createElement('div');
  el.className = 'dg-viewer';
  const bar = document.createElement('div');
  bar.className = 'dg-toolbar';
  bar.setAttribute('role', 'toolbar');
  bar.setAttribute('aria-label', 'Diagram zoom');
  const area = document.createElement('div');
  area.className = 'dg-canvas';
  area.tabIndex = 0;
  area.setAttribute('aria-label', 'Workflow diagram (scroll or drag to pan)');
  const level = document.createElement('span');
  level.className = 'dg-zoom-level';
  level.setAttribute('aria-live', 'polite');
  let scale = 1;
  let cur = null;
  const mk = (label, title, fn) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'btn btn-small dg-zoom';
    b.textContent = label;
    b.title = title;
    b.setAttribute('aria-label', title);
    b.addEventListener('click', fn);
    bar.appendChild(b);
    return b;
  };
  const apply = (s, keepCenter = true) => {
    if (!cur) return;
    const old = scale;
    scale = Math.min(3, Math.max(0.02, s));
    const cxr = (area.scrollLeft + area.clientWidth / 2) / old;
    const cyr = (area.scrollTop + area.clientHeight / 2) / old;
    cur.setAttribute('width', Math.round(cur._size.w * scale));
    cur.setAttribute('height', Math.round(cur._size.h * scale));
    if (keepCenter) {
      area.scrollLeft = cxr * scale - area.clientWidth / 2;
      area.scrollTop = cyr * scale - area.clientHeight / 2;
    }
    level.textContent = `${Math.round(scale * 100)} %`;
  };
  const fitScale = () => {
    if (!cur) return 1;
    const aw = area.clientWidth || 800;
    const ah = area.clientHeight || 600;
    return Math.min(1, aw / cur._size.w, ah / cur._size.h);
  };
  mk('−', 'Zoom out', () => apply(scale / 1.25));
  mk('+', 'Zoom in', () => apply(scale * 1.25));
  mk('Fit', 'Fit the whole diagram', () => apply(fitScale(), false));
  mk('100 %', 'Actual size', () => apply(1));
  bar.appendChild(level);
  el.append(bar, area);

  // drag to pan (not when the press starts on a node or a link)
  let drag = null;
  area.addEventListener('pointerdown', (e) => {
    if (e.button !== 0 || e.target.closest('.node, a')) return;
    drag = { x: e.clientX, y: e.clientY, l: area.scrollLeft, t: area.scrollTop, id: e.pointerId };
    area.setPointerCapture(e.pointerId);
    area.classList.add('dragging');
  });
  area.addEventListener('pointermove', (e) => {
    if (!drag) return;
    area.scrollLeft = drag.l - (e.clientX - drag.x);
    area.scrollTop = drag.t - (e.clientY - drag.y);
  });
  const end = () => { if (drag) { try { area.releasePointerCapture(drag.id); } catch { /* gone */ } } drag = null; area.classList.remove('dragging'); };
  area.addEventListener('pointerup', end);
  area.addEventListener('pointercancel', end);
  // ctrl/⌘ + wheel (and pinch on a touchpad) zooms around the pointer
  area.addEventListener('wheel', (e) => {
    if (!cur || !(e.ctrlKey || e.metaKey)) return;
    e.preventDefault();
    const r = area.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const ux = (area.scrollLeft + px) / scale;
    const uy = (area.scrollTop + py) / scale;
    apply(scale * Math.exp(-e.deltaY * 0.002), false);
    area.scrollLeft = ux * scale - px;
    area.scrollTop = uy * scale - py;
  }, { passive: false });
  area.addEventListener('keydown', (e) => {
    if (e.target !== area) return;
    if (e.key === '+' || e.key === '=') { apply(scale * 1.25); e.preventDefault(); }
    if (e.key === '-') { apply(scale / 1.25); e.preventDefault(); }
  });

  const api = {
    el,
    setSvg(s) {
      if (cur) cur.remove();
      const aw = area.clientWidth || 900;   // measured before the svg is in (one layout, not two)
      cur = s;
      // readable first: fit the width, but never smaller than 35 % (big graphs scroll)
      scale = Math.max(0.35, Math.min(1, (aw - 24) / s._size.w));
      s.setAttribute('width', Math.round(s._size.w * scale));
      s.setAttribute('height', Math.round(s._size.h * scale));
      level.textContent = `${Math.round(scale * 100)} %`;
      area.appendChild(s);
      if (s._size.w * scale > aw) area.scrollLeft = (s._size.w * scale - aw) / 2;
    },
    reveal(ref) {
      const g = cur && cur._nodes && cur._nodes.get(ref);
      if (!g) return;
      const n = g._n;
      const x = (n.x + n.w / 2) * scale;
      const y = (n.y + n.h / 2) * scale;
      if (x < area.scrollLeft || x > area.scrollLeft + area.clientWidth || y < area.scrollTop || y > area.scrollTop + area.clientHeight) {
        area.scrollLeft = x - area.clientWidth / 2;
        area.scrollTop = y - area.clientHeight / 2;
      }
    },
    get scale() { return scale; },
  };
  if (svg) api.setSvg(svg);
  return api;
}
