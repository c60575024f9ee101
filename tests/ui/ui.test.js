// nodeflow's web UI in headless Chromium (run by tests/ui/run.sh): sign in, the list of
// executions started through the API, a task turning from SCHEDULED to COMPLETED on screen
// without a reload, terminate from the UI (TERMINATED in the database), and a reader whose
// actions the server refuses (not only the page). With NF_UI_SCREENSHOTS it saves pictures.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { chromium } = require('playwright-core');

const base = process.env.NF_UI_URL;
const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (tests/ui/run.sh sets it)`);
  return v;
};

let browser;
let adminToken;

async function call(method, route, body, token = adminToken) {
  const headers = { 'X-Authorization': token };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + route, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  try { return text ? JSON.parse(text) : null; } catch { return text; }
}

function sql(query) {
  return execFileSync(env('NF_UI_PSQL'), [env('NF_UI_DSN'), '-X', '-At', '-c', query])
    .toString().trim();
}

function statusInDb(id) {
  return sql(`SELECT "status" FROM "WorkflowExecutions" WHERE "id" = '${id}'`);
}

async function start(name, input = {}) {
  const id = await call('POST', '/api/workflow', { name, version: 1, input });
  assert.match(String(id), /^[0-9a-f-]{36}$/);
  return String(id);
}

async function signIn(page, user, password) {
  await page.goto(`${base}/#/login`);
  await page.getByLabel('Username').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).first().click();
  await page.getByText(`user:${user}`).first().waitFor();
}

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  return page;
}

before(async () => {
  browser = await chromium.launch({
    executablePath: env('NF_CHROMIUM'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const token = await fetch(`${base}/api/token`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ keyId: env('NF_UI_KEY_ID'), keySecret: env('NF_UI_KEY_SECRET') }),
  });
  assert.equal(token.status, 200);
  adminToken = (await token.json()).token;
  await call('POST', '/api/metadata/taskdefs', [{ name: 'ui_step', retryCount: 0 }]);
  await call('POST', '/api/metadata/workflow', {
    name: 'ui_task', version: 1,
    tasks: [{ name: 'ui_step', taskReferenceName: 'step', type: 'SIMPLE' }],
  });
  await call('POST', '/api/metadata/workflow', {
    name: 'ui_hold', version: 1,
    tasks: [{ name: 'hold', taskReferenceName: 'hold', type: 'WAIT', inputParameters: { signal: 'go' } }],
  });
});

after(async () => {
  if (browser) await browser.close();
});

test('the list shows executions started through the API after signing in', async () => {
  const ids = [await start('ui_hold'), await start('ui_hold'), await start('ui_hold')];
  const page = await newPage();
  // Without a token the UI asks to sign in.
  await page.goto(`${base}/#/executions`);
  await page.getByLabel('Username').waitFor();
  await signIn(page, env('NF_UI_ADMIN'), env('NF_UI_ADMIN_PASSWORD'));
  await page.goto(`${base}/#/executions`);
  for (const id of ids)
    await page.locator(`tr[data-workflow-id="${id}"]`).waitFor({ timeout: 20000 });
  const row = page.locator(`tr[data-workflow-id="${ids[0]}"]`);
  assert.match(await row.innerText(), /RUNNING/);
  assert.match(await row.innerText(), /ui_hold/);
  await page.context().close();
});

test('a task turns from scheduled to completed on screen without a reload', async () => {
  const id = await start('ui_task');
  const page = await newPage();
  await signIn(page, env('NF_UI_ADMIN'), env('NF_UI_ADMIN_PASSWORD'));
  await page.goto(`${base}/#/executions/${id}`);
  await page.locator('g[data-ref="step"][data-status="SCHEDULED"]').waitFor({ timeout: 20000 });
  await page.evaluate(() => { window.nfSamePage = true; });
  // A worker: lease the task and complete it through the API.
  let task = null;
  for (let i = 0; i < 50 && !(task && task.workflowInstanceId === id); ++i) {
    task = await call('GET', '/api/tasks/poll/ui_step?workerid=ui-test');
    if (!task) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(task && task.workflowInstanceId === id, 'the task was leased');
  await call('POST', '/api/tasks', {
    workflowInstanceId: id, taskId: task.taskId, status: 'COMPLETED', outputData: { done: true },
  });
  await page.locator('g[data-ref="step"][data-status="COMPLETED"]').waitFor({ timeout: 20000 });
  await page.getByTestId('workflow-status').filter({ hasText: 'COMPLETED' }).waitFor({ timeout: 20000 });
  assert.equal(await page.evaluate(() => window.nfSamePage), true, 'the page was not reloaded');
  await page.context().close();
});

test('terminate from the UI ends the workflow in the database', async () => {
  const id = await start('ui_hold');
  const page = await newPage();
  await signIn(page, env('NF_UI_ADMIN'), env('NF_UI_ADMIN_PASSWORD'));
  await page.goto(`${base}/#/executions/${id}`);
  await page.getByTestId('workflow-status').filter({ hasText: 'RUNNING' }).waitFor();
  await page.getByRole('button', { name: 'Terminate', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Reason').fill('stopped from the web UI');
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await page.getByTestId('workflow-status').filter({ hasText: 'TERMINATED' }).waitFor({ timeout: 20000 });
  assert.equal(statusInDb(id), 'TERMINATED');
  assert.equal(sql(`SELECT "reasonForIncompletion" FROM "WorkflowExecutions" WHERE "id" = '${id}'`),
    'stopped from the web UI');
  await page.context().close();
});

test('a reader sees the actions disabled and the server refuses them when forced', async () => {
  const id = await start('ui_hold');
  const page = await newPage();
  await signIn(page, env('NF_UI_READER'), env('NF_UI_READER_PASSWORD'));
  await page.goto(`${base}/#/executions/${id}`);
  await page.getByTestId('workflow-status').filter({ hasText: 'RUNNING' }).waitFor();
  const terminate = page.getByRole('button', { name: 'Terminate', exact: true });
  assert.equal(await terminate.isDisabled(), true, 'a reader cannot press Terminate');
  // Enabled by hand: the click goes to the server, which refuses it.
  await terminate.evaluate((b) => { b.disabled = false; b.click(); });
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('status').filter({ hasText: /reader may not/ }).waitFor({ timeout: 20000 });
  assert.equal(statusInDb(id), 'RUNNING');
  // The same with the reader's own token, outside the page's code.
  const refused = await page.evaluate(async (wf) => {
    const token = sessionStorage.getItem('nodeflow.token');
    const res = await fetch(`/api/workflow/${wf}?reason=x`, { method: 'DELETE', headers: { 'X-Authorization': token } });
    return res.status;
  }, id);
  assert.equal(refused, 403);
  assert.equal(statusInDb(id), 'RUNNING');
  await page.context().close();
});

test('screenshots of the list, a diagram and the cluster', { skip: !process.env.NF_UI_SCREENSHOTS }, async () => {
  const dir = process.env.NF_UI_SCREENSHOTS;
  const page = await newPage();
  await signIn(page, env('NF_UI_ADMIN'), env('NF_UI_ADMIN_PASSWORD'));
  // Let the sample worker get through most of its executions.
  await new Promise((r) => setTimeout(r, 8000));
  await page.goto(`${base}/#/executions`);
  await page.locator('tr[data-workflow-id]').first().waitFor();
  await page.waitForTimeout(1500);
  await page.screenshot({ path: path.join(dir, 'ui-executions.png') });
  const page1 = await call('GET', '/api/workflow/search?workflowType=sample_order&size=40');
  const done = page1.results.find((r) => r.status === 'COMPLETED') || page1.results[0];
  await page.goto(`${base}/#/executions/${done.workflowId}`);
  await page.locator('g[data-ref]').first().waitFor();
  await page.waitForTimeout(1500);
  await page.screenshot({ path: path.join(dir, 'ui-execution.png') });
  await page.goto(`${base}/#/cluster`);
  await page.getByTestId('cluster-partitions').waitFor();
  await page.waitForTimeout(1500);
  await page.screenshot({ path: path.join(dir, 'ui-cluster.png') });
  await page.context().close();
});
