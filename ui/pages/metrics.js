// Metrics: throughput and latency over the last hour as inline SVG line charts, every 5 s.
import { h, s, clear, absTime } from '../dom.js';

const REFRESH_MS = 5000;

const THROUGHPUT = [
  { key: 'workflowsStarted', label: 'Workflows started' },
  { key: 'workflowsEnded', label: 'Workflows ended' },
  { key: 'tasksLeased', label: 'Tasks leased' },
  { key: 'tasksEnded', label: 'Tasks ended' },
];
const LATENCY = [
  { key: 'decideFlushP50Ms', label: 'Decide flush p50' },
  { key: 'decideFlushP99Ms', label: 'Decide flush p99' },
  { key: 'httpP99Ms', label: 'HTTP p99' },
];

/** 1, 2, 5 × 10^n steps so that about `count` ticks cover [0, max]. */
function niceTicks(max, count = 5) {
  if (!(max > 0)) return { step: 1, top: 1, ticks: [0, 1] };
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const top = Math.ceil(max / step) * step;
  const ticks = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { step, top, ticks };
}

function fmtValue(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  const a = Math.abs(v);
  let t;
  if (a >= 1e6) t = `${(v / 1e6).toFixed(1)}M`;
  else if (a >= 1e4) t = `${(v / 1e3).toFixed(0)}k`;
  else if (a >= 1e3) t = `${(v / 1e3).toFixed(1)}k`;
  else if (a >= 100) t = v.toFixed(0);
  else if (a >= 10) t = v.toFixed(1).replace(/\.0$/, '');
  else t = v.toFixed(2).replace(/\.?0+$/, '') || '0';
  return unit ? `${t} ${unit}` : t;
}

function hhmm(ms, withSeconds) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return withSeconds ? `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}` : `${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * A line chart as an <svg>: x = time (ms), y from 0; series [{label, cls, points:[[t, v|null]]}].
 * Gaps (null) break the line. Returns the SVG element.
 */
export function lineChart({ series, unit = '', width = 640, height = 240, title = '' }) {
  const m = { l: 52, r: 14, t: 12, b: 28 };
  const iw = width - m.l - m.r;
  const ih = height - m.t - m.b;
  const all = series.flatMap((se) => se.points);
  const ts = all.map((p) => p[0]);
  const t0 = Math.min(...ts); const t1 = Math.max(...ts);
  const span = Math.max(t1 - t0, 1);
  const vmax = Math.max(0, ...all.map((p) => (typeof p[1] === 'number' ? p[1] : 0)));
  const { top, ticks } = niceTicks(vmax || 1, 4);
  const x = (t) => m.l + ((t - t0) / span) * iw;
  const y = (v) => m.t + ih - (v / top) * ih;

  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title });
  if (title) svg.appendChild(s('title', null, title));

  const grid = s('g', { class: 'grid' });
  const yAxis = s('g', { class: 'axis y' });
  for (const v of ticks) {
    const yy = y(v);
    grid.appendChild(s('line', { x1: m.l, x2: m.l + iw, y1: yy, y2: yy }));
    yAxis.appendChild(s('text', { x: m.l - 6, y: yy + 3.5, 'text-anchor': 'end' }, fmtValue(v)));
  }
  if (unit) yAxis.appendChild(s('text', { x: 4, y: m.t + 2, 'text-anchor': 'start', 'dominant-baseline': 'hanging' }, unit));

  const xAxis = s('g', { class: 'axis x' });
  xAxis.appendChild(s('line', { x1: m.l, x2: m.l + iw, y1: m.t + ih, y2: m.t + ih }));
  xAxis.appendChild(s('line', { x1: m.l, x2: m.l, y1: m.t, y2: m.t + ih }));
  // time ticks at round minutes
  const stepChoices = [10e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3];
  const tstep = stepChoices.find((c) => span / c <= 7) || 3600e3;
  const withSeconds = tstep < 60e3;
  for (let t = Math.ceil(t0 / tstep) * tstep; t <= t1; t += tstep) {
    const xx = x(t);
    grid.appendChild(s('line', { x1: xx, x2: xx, y1: m.t, y2: m.t + ih }));
    xAxis.appendChild(s('line', { x1: xx, x2: xx, y1: m.t + ih, y2: m.t + ih + 4 }));
    xAxis.appendChild(s('text', { x: xx, y: m.t + ih + 17, 'text-anchor': 'middle' }, hhmm(t, withSeconds)));
  }
  svg.append(grid, xAxis, yAxis);

  // hover cursor: a vertical line, moved by the caller
  const cursor = s('line', { class: 'cursor', x1: 0, x2: 0, y1: m.t, y2: m.t + ih, visibility: 'hidden' });
  svg.appendChild(cursor);
  svg.chartScale = { x, t0, t1, left: m.l, right: m.l + iw, width, cursor };

  for (const se of series) {
    let d = '';
    let pen = false;
    for (const [t, v] of se.points) {
      if (typeof v !== 'number' || Number.isNaN(v)) { pen = false; continue; }
      d += `${pen ? 'L' : 'M'}${x(t).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    }
    if (d) {
      const path = s('path', { class: `series ${se.cls}`, d });
      path.appendChild(s('title', null, se.label));
      svg.appendChild(path);
    }
  }
  return svg;
}

function chartCard(titleText, sub) {
  const legend = h('div', { class: 'legend' });
  const at = h('span', { class: 'chart-at' });
  const box = h('div', { class: 'chart' });
  const card = h('section', { class: 'card chart-card', 'aria-label': titleText },
    h('div', { class: 'chart-head' }, h('h2', titleText), h('span', { class: 'muted small' }, sub), at), legend, box);
  return { card, legend, box, at };
}

export default {
  title: 'Metrics',
  async mount(root, params, ctx) {
    let alive = true;
    let timer = null;
    const note = h('span', { class: 'sub' });
    const errBox = h('div', { class: 'notice', role: 'status', hidden: true });
    const tp = chartCard('Throughput', 'per second, averaged over each interval');
    const lat = chartCard('Latency', 'milliseconds');
    const grid = h('div', { class: 'chart-stack' }, tp.card, lat.card);
    root.append(h('div', { class: 'page-head' }, h('div', h('h1', 'Metrics'), note)), errBox, grid);

    function draw(card, defs, samples, unit, title) {
      const { box, legend, at } = card;
      const series = defs.map((d, i) => ({
        label: d.label,
        cls: `c${i}`,
        points: samples.map((smp) => [smp.at, typeof smp[d.key] === 'number' ? smp[d.key] : null]),
      })).filter((se) => se.points.some((p) => p[1] !== null));
      clear(legend);
      const values = [];
      for (const se of series) {
        const v = h('span', { class: 'last' });
        values.push(v);
        legend.appendChild(h('span', h('span', { class: `sw ${se.cls}`, 'aria-hidden': 'true' }), se.label, v));
      }
      const showAt = (idx) => {
        series.forEach((se, i) => {
          let p = null;
          if (idx === null) p = [...se.points].reverse().find((q) => q[1] !== null);
          else p = se.points[idx];
          values[i].textContent = p && p[1] !== null ? fmtValue(p[1], unit) : '—';
        });
        at.textContent = idx === null ? 'latest' : `at ${hhmm(samples[idx].at, true)}`;
      };
      showAt(null);
      clear(box);
      if (!series.length || samples.length < 2) {
        box.appendChild(h('p', { class: 'muted' }, 'Not enough samples yet; the node takes one every interval.'));
        return;
      }
      const width = Math.max(480, Math.round(box.clientWidth || 900));
      const svg = lineChart({ series, unit, width, height: 205, title });
      const sc = svg.chartScale;
      svg.addEventListener('mousemove', (ev) => {
        const r = svg.getBoundingClientRect();
        const px = ((ev.clientX - r.left) / r.width) * sc.width;
        if (px < sc.left || px > sc.right) return;
        const t = sc.t0 + ((px - sc.left) / (sc.right - sc.left)) * (sc.t1 - sc.t0);
        let best = 0;
        for (let i = 1; i < samples.length; i++) if (Math.abs(samples[i].at - t) < Math.abs(samples[best].at - t)) best = i;
        const xx = sc.x(samples[best].at);
        sc.cursor.setAttribute('x1', xx); sc.cursor.setAttribute('x2', xx);
        sc.cursor.setAttribute('visibility', 'visible');
        showAt(best);
      });
      svg.addEventListener('mouseleave', () => { sc.cursor.setAttribute('visibility', 'hidden'); showAt(null); });
      box.appendChild(svg);
    }

    async function load() {
      try {
        const r = await ctx.api.get('/api/metrics/series');
        if (!alive) return true;
        errBox.hidden = true;
        grid.hidden = false;
        const samples = (r && Array.isArray(r.samples) ? r.samples : [])
          .map((smp) => ({ ...smp, at: typeof smp.at === 'number' ? smp.at : Date.parse(smp.at) }))
          .filter((smp) => !Number.isNaN(smp.at))
          .sort((a, b) => a.at - b.at);
        const interval = r && r.intervalMs ? `${r.intervalMs / 1000} s samples` : 'samples';
        note.textContent = samples.length
          ? `${interval} · ${hhmm(samples[0].at)}–${hhmm(samples[samples.length - 1].at)} · refreshed ${absTime(Date.now()).slice(11)}`
          : `${interval} · none yet`;
        draw(tp, THROUGHPUT, samples, '/s', 'Throughput per second');
        draw(lat, LATENCY, samples, 'ms', 'Latency in milliseconds');
        return true;
      } catch (e) {
        if (!alive || e.status === 401) return true;
        errBox.hidden = false;
        if (e.status === 404) {
          grid.hidden = true;
          errBox.className = 'notice notice-info';
          errBox.textContent = 'This node does not keep a metrics series. Its Prometheus metrics are at /metrics.';
          note.textContent = '';
          return false;
        }
        errBox.className = 'notice notice-error';
        errBox.textContent = `Could not load the metrics: ${e.message}`;
        return true;
      }
    }

    const tick = async () => {
      if (!alive) return;
      const again = document.hidden ? true : await load();
      if (alive && again) timer = setTimeout(tick, REFRESH_MS);
    };
    const again = await load();
    if (again) timer = setTimeout(tick, REFRESH_MS);
    return () => { alive = false; clearTimeout(timer); };
  },
};
