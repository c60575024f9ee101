// What the web UI costs on a big history (bench/ui/run): how long the page of an execution
// with 1,000 tasks takes to be usable in Chromium, and how long the server takes to answer a
// list page (and the counts beside it) over a million finished executions. Prints one JSON
// line per measure and a table.
'use strict';
const { chromium } = require('playwright-core');

const base = process.env.NF_BENCH_URL;
const runs = Number(process.env.NF_BENCH_RUNS || 5);
const listRuns = Number(process.env.NF_BENCH_LIST_RUNS || 20);
const executions = JSON.parse(process.env.NF_BENCH_DETAIL || '[]'); // [{label, id, tasks}]

function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function timed(route) {
  const t0 = process.hrtime.bigint();
  const res = await fetch(base + route);
  const body = await res.text();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (res.status !== 200) throw new Error(`${route}: ${res.status} ${body}`);
  return { ms, body: JSON.parse(body) };
}

async function detailPage(browser, { label, id, tasks }) {
  const times = [];
  for (let i = 0; i < runs; ++i) {
    // A new context each time: no cache, no state; the UI's files are revalidated too.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/#/executions/${id}`, { waitUntil: 'commit' });
    // Usable: the status shown and every task's node in the diagram coloured by its state.
    const ms = await page.waitForFunction(() => {
      const status = document.querySelector('[data-testid="workflow-status"]');
      const nodes = document.querySelectorAll('g[data-ref][data-status]:not([data-status=""])');
      return status && status.textContent.trim() && nodes.length > 0 ? performance.now() : 0;
    }, null, { polling: 'raf', timeout: 30000 }).then((h) => h.jsonValue());
    times.push(ms);
    await context.close();
  }
  return { measure: 'detail_page_ms', label, tasks, runs, p50: quantile(times, 0.5), max: Math.max(...times) };
}

async function listPage(label, route) {
  const times = [];
  let answer = null;
  for (let i = 0; i < listRuns; ++i) {
    const { ms, body } = await timed(route);
    times.push(ms);
    answer = body;
  }
  return { measure: 'list_ms', label, route, runs: listRuns, p50: quantile(times, 0.5),
    p95: quantile(times, 0.95), max: Math.max(...times), answer };
}

(async () => {
  const rows = [];
  const browser = await chromium.launch({
    executablePath: process.env.NF_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  for (const e of executions) rows.push(await detailPage(browser, e));
  await browser.close();

  if (process.env.NF_BENCH_LIST === '1') {
    const first = await listPage('first page, any status', '/api/workflow/search?size=50');
    rows.push(first);
    rows.push(await listPage('first page, COMPLETED', '/api/workflow/search?size=50&status=COMPLETED'));
    rows.push(await listPage('first page, one name', `/api/workflow/search?size=50&workflowType=${process.env.NF_BENCH_NAME}`));
    rows.push(await listPage('first page, FAILED (none)', '/api/workflow/search?size=50&status=FAILED'));
    // Deep in the history: a page starting from an execution half-way back.
    const mid = process.env.NF_BENCH_MIDDLE_ID;
    if (mid) rows.push(await listPage('a page half-way back', `/api/workflow/search?size=50&cursor=${mid}`));
    rows.push(await listPage('counts per status', '/api/workflow/counts'));
    rows.push(await listPage('counts, one name', `/api/workflow/counts?workflowType=${process.env.NF_BENCH_NAME}`));
  }
  for (const r of rows) {
    const { answer, ...line } = r;
    if (r.measure === 'list_ms') line.results = answer.results ? answer.results.length : undefined;
    console.log(JSON.stringify(line));
  }
  console.log('');
  console.log('measure                         p50 ms   max ms');
  for (const r of rows) {
    const name = r.measure === 'detail_page_ms' ? `detail page: ${r.label}` : `server: ${r.label}`;
    console.log(`${name.padEnd(32)}${r.p50.toFixed(1).padStart(7)}  ${r.max.toFixed(1).padStart(7)}`);
  }
})().catch((e) => { console.error(e); process.exit(1); });
