// nodeflow driven by the official Conductor JavaScript SDK, as a Conductor user would drive
// Conductor: definitions through its metadata client, workers through its TaskHandler,
// workflows started and read through its workflow client, a WAIT completed through its task
// client (updateTaskByRefName). A worker-less workflow made with the SDK's own builders (INLINE,
// JSON_JQ_TRANSFORM, a DO_WHILE of INLINE, SWITCH, SET_VARIABLE) runs to Conductor's outputs,
// and a schedule made through its SchedulerClient starts it. Lookups (status summary, by
// correlation id, running) and bulk pause, resume and terminate go through its clients too, and
// so do a synchronous execution answered where the workflow blocks and signals to its WAITs.
// Then a worker process killed with SIGKILL while it holds a task: the task is
// leased again once its responseTimeoutSeconds pass, and the dead worker's late result is
// refused. run.sh starts Postgres and the node (authentication on), makes a worker key and an
// admin key (NF_SDK_WORKER_KEY/_SECRET, NF_SDK_ADMIN_KEY/_SECRET) and sets
// CONDUCTOR_SERVER_URL. Workers use the worker key, definitions and workflows the admin key;
// no credentials get 401, a worker key defining a task 403.
//
//   node conductor_sdk.test.js           the test
//   node conductor_sdk.test.js victim    the worker the test kills (prints each task it holds)

"use strict";

const { spawn } = require("child_process");
const {
  OrkesClients, TaskHandler, workflow, setVariableTask, inlineTask, jsonJqTask, newLoopTask,
  switchTask, terminateTask,
} = require("@io-orkes/conductor-javascript");

const COUNT = Number(process.env.NF_SDK_WORKFLOWS || 200);
const quiet = { info() {}, debug() {}, error: (...a) => console.error(...a) };

const taskDefs = [
  { name: "sdk_greet", retryCount: 2, retryDelaySeconds: 0, responseTimeoutSeconds: 30,
    timeoutSeconds: 60 },
  { name: "sdk_double", retryCount: 2, retryDelaySeconds: 0, responseTimeoutSeconds: 30,
    timeoutSeconds: 60 },
  // The killed worker's task: its lease ends 2 s after the last word from its worker.
  { name: "sdk_slow", retryCount: 1, retryDelaySeconds: 0, responseTimeoutSeconds: 2,
    timeoutPolicy: "RETRY",
    timeoutSeconds: 60 },
];

// A sequence, a FORK_JOIN/JOIN, a SWITCH and a WAIT completed from outside.
const mixed = {
  name: "sdk_mixed",
  version: 1,
  schemaVersion: 2,
  inputParameters: ["name", "n", "kind"],
  tasks: [
    { name: "sdk_greet", taskReferenceName: "greet", type: "SIMPLE",
      inputParameters: { name: "${workflow.input.name}", me: "${CPEWF_TASK_ID}" } },
    { name: "fork", taskReferenceName: "fork", type: "FORK_JOIN",
      forkTasks: [
        [{ name: "sdk_double", taskReferenceName: "left", type: "SIMPLE",
           inputParameters: { n: "${workflow.input.n}" } }],
        [{ name: "sdk_double", taskReferenceName: "right", type: "SIMPLE",
           inputParameters: { n: 21 } }],
      ] },
    { name: "join", taskReferenceName: "join", type: "JOIN", joinOn: ["left", "right"] },
    { name: "route", taskReferenceName: "route", type: "SWITCH", evaluatorType: "value-param",
      expression: "kind", inputParameters: { kind: "${workflow.input.kind}" },
      decisionCases: {
        even: [{ name: "sdk_double", taskReferenceName: "even", type: "SIMPLE",
                 inputParameters: { n: "${left.output.n}" } }],
      },
      defaultCase: [{ name: "sdk_greet", taskReferenceName: "odd", type: "SIMPLE",
                      inputParameters: { name: "odd" } }] },
    { name: "approval", taskReferenceName: "approval", type: "WAIT" },
  ],
  outputParameters: {
    greeting: "${greet.output.greeting}",
    left: "${left.output.n}",
    right: "${right.output.n}",
    approvedBy: "${approval.output.by}",
  },
};

const victimFlow = {
  name: "sdk_victim",
  version: 1,
  schemaVersion: 2,
  tasks: [{ name: "sdk_slow", taskReferenceName: "slow", type: "SIMPLE" }],
  outputParameters: { attempt: "${slow.output.attempt}" },
};

// The SDK reads CONDUCTOR_AUTH_KEY/_SECRET when a client is made (and prefers them to its
// config), so each client is made with the key it should hold in those variables.
function useKey(role) {
  process.env.CONDUCTOR_AUTH_KEY = process.env[`NF_SDK_${role}_KEY`];
  process.env.CONDUCTOR_AUTH_SECRET = process.env[`NF_SDK_${role}_SECRET`];
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

// Retries `fn` until it resolves (a WAIT not scheduled yet answers 404), at most `ms`.
async function eventually(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > end) throw new Error(what + ": " + (e && e.message));
      await sleep(50);
    }
  }
}

async function victim() {
  const clients = await OrkesClients.from();
  const handler = new TaskHandler({
    client: clients.getClient(),
    scanForDecorated: false,
    logger: quiet,
    workers: [{
      taskDefName: "sdk_slow",
      pollInterval: 20,
      execute: async (task) => {
        // Tell the test which task it holds, then never answer.
        process.stdout.write(JSON.stringify({ taskId: task.taskId,
                                              workflowInstanceId: task.workflowInstanceId })
                             + "\n");
        await new Promise(() => {});
      },
    }],
  });
  await handler.startWorkers();
}

async function main() {
  const started = Date.now();
  const anon = await fetch(`${process.env.CONDUCTOR_SERVER_URL}/api/metadata/taskdefs`);
  check(anon.status === 401, `a request without credentials is refused (401): ${anon.status}`);
  useKey("WORKER");
  // README: worker begin
  const clients = await OrkesClients.from(); // reads CONDUCTOR_SERVER_URL, CONDUCTOR_AUTH_KEY/_SECRET
  const handler = new TaskHandler({
    client: clients.getClient(),
    scanForDecorated: false,
    workers: [
      {
        taskDefName: "sdk_greet",
        concurrency: 10,
        pollInterval: 10,
        execute: async (task) => ({
          status: "COMPLETED",
          outputData: { greeting: `Hello ${task.inputData.name}` },
        }),
      },
      {
        taskDefName: "sdk_double",
        concurrency: 10,
        pollInterval: 10,
        execute: async (task) => ({
          status: "COMPLETED",
          outputData: { n: 2 * task.inputData.n },
        }),
      },
    ],
  });
  await handler.startWorkers();
  // README: worker end

  let denied = null;
  try {
    await clients.getMetadataClient().registerTasks(taskDefs);
  } catch (e) {
    denied = e;
  }
  check(denied, "a worker key may not register task definitions");
  console.log("a worker key defining tasks is refused: " + denied.message);

  useKey("ADMIN");
  const admin = await OrkesClients.from();
  const metadata = admin.getMetadataClient();
  const workflows = admin.getWorkflowClient();
  await metadata.registerTasks(taskDefs);
  await metadata.registerWorkflowDef(mixed, true);
  await metadata.registerWorkflowDef(victimFlow, true);
  // Registered again as a deploy script does: overwrite=true replaces, the default refuses.
  await metadata.registerWorkflowDef(mixed, true);
  let exists = null;
  try {
    await metadata.registerWorkflowDef(mixed);
  } catch (e) {
    exists = e;
  }
  check(exists && /already exists/.test(exists.message), "a second create without overwrite is refused");
  const readBack = await metadata.getWorkflowDef("sdk_mixed", 1); // sends metadata=false
  check(readBack.name === "sdk_mixed" && readBack.tasks.length === mixed.tasks.length,
        "the definition read back through the SDK");

  // 200 executions, then each one's WAIT completed by its reference name once it waits.
  const ids = [];
  for (let i = 0; i < COUNT; ++i)
    ids.push(await workflows.startWorkflow({
      name: "sdk_mixed", version: 1,
      input: { name: `n${i}`, n: i, kind: i % 2 === 0 ? "even" : "odd" },
    }));
  check(ids.every((id) => typeof id === "string" && id.length > 0), "workflow ids");
  console.log(`started ${ids.length} workflows in ${Date.now() - started} ms`);

  const pending = new Set(ids);
  const approved = new Set();
  const deadline = Date.now() + 60000;
  while (pending.size > 0) {
    check(Date.now() < deadline, `${pending.size} workflows still running after 60 s`);
    await Promise.all([...pending].map(async (id) => {
      if (!approved.has(id)) {
        try {
          await workflows.updateTaskByRefName("approval", id, "COMPLETED", { by: "sdk" });
          approved.add(id);
        } catch (e) {
          return; // not waiting yet
        }
      }
      const wf = await workflows.getWorkflow(id, false);
      if (wf.status === "COMPLETED") {
        const i = ids.indexOf(id);
        check(wf.output.greeting === `Hello n${i}`, `greeting of ${id}`);
        check(wf.output.left === 2 * i && wf.output.right === 42, `fork outputs of ${id}`);
        check(wf.output.approvedBy === "sdk", `WAIT output of ${id}`);
        pending.delete(id);
      } else {
        check(wf.status === "RUNNING", `${id} ended ${wf.status}`);
      }
    }));
    if (pending.size > 0) await sleep(100);
  }
  console.log(`all ${ids.length} workflows completed in ${Date.now() - started} ms`);
  const first = await workflows.getWorkflow(ids[0], true);
  const greet = first.tasks.find((t) => t.referenceTaskName === "greet");
  check(greet && greet.inputData.me === greet.taskId,
        "${CPEWF_TASK_ID} is the greet task's id: " + (greet && greet.inputData.me));

  await builtBySdk(metadata, workflows);
  await scheduledBySdk(admin.getSchedulerClient());
  await lookedUpBySdk(admin, metadata, workflows);
  await signalledBySdk(metadata, workflows);

  // A worker killed while it holds a task.
  const vid = await workflows.startWorkflow({ name: "sdk_victim", version: 1, input: {} });
  const child = spawn(process.execPath, [__filename, "victim"],
                      { stdio: ["ignore", "pipe", "inherit"],
                        env: { ...process.env, CONDUCTOR_AUTH_KEY: process.env.NF_SDK_WORKER_KEY,
                               CONDUCTOR_AUTH_SECRET: process.env.NF_SDK_WORKER_SECRET } });
  const held = await new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)));
    });
    child.on("exit", (code) => reject(new Error("victim exited " + code)));
    setTimeout(() => reject(new Error("the victim got no task in 20 s")), 20000);
  });
  check(held.workflowInstanceId === vid, "the victim holds the victim workflow's task");
  child.kill("SIGKILL");
  console.log("killed the worker holding " + held.taskId);

  const rescuer = new TaskHandler({
    client: clients.getClient(),
    scanForDecorated: false,
    logger: quiet,
    workers: [{
      taskDefName: "sdk_slow",
      pollInterval: 20,
      execute: async (task) => ({ status: "COMPLETED",
                                  outputData: { attempt: task.retryCount } }),
    }],
  });
  await rescuer.startWorkers();
  const done = await eventually(async () => {
    const wf = await workflows.getWorkflow(vid, false);
    if (wf.status !== "COMPLETED") throw new Error("still " + wf.status);
    return wf;
  }, 30000, "the killed worker's task was not retried");
  check(done.output.attempt === 1, "the retried attempt completed the workflow");

  // The dead worker's result, late: refused, and nothing changes.
  let refused = null;
  try {
    await workflows.updateTask(held.taskId, vid, "COMPLETED", { attempt: 0 });
  } catch (e) {
    refused = e;
  }
  check(refused && /lease was lost/.test(refused.message),
        "a late result for the old lease is refused: " + (refused && refused.message));
  const after = await workflows.getWorkflow(vid, false);
  check(after.status === "COMPLETED" && after.output.attempt === 1, "the late result changed nothing");
  console.log("the late result was refused: " + refused.message);

  await rescuer.stopWorkers();
  await handler.stopWorkers();
  console.log(`sdk test passed in ${Date.now() - started} ms`);
}

// The SDK's builders write the shapes Conductor documents; their outputs are the documented ones.
async function builtBySdk(metadata, workflows) {
  const wf = workflow("sdk_builders", [
    setVariableTask("seed", { seed: "${workflow.input.n}" }),
    inlineTask("double", "(function () { return $.value * 2; })();"),
    jsonJqTask("jq", "{ key3: (.key1.value1 + .key2.value2) }"),
    newLoopTask("loop", 3, [inlineTask("inner", "(function () { return $.i + 1; })();")]),
    switchTask("sw", "${double.output.result}", { "8": [setVariableTask("eight", { eight: true })] },
               [terminateTask("not_eight", "FAILED", "double is not 8")]),
  ]);
  wf.tasks[1].inputParameters.value = "${workflow.input.n}";
  Object.assign(wf.tasks[2].inputParameters, { key1: { value1: ["a", "b"] }, key2: { value2: ["d", "e"] } });
  wf.tasks[3].loopOver[0].inputParameters.i = "${loop.output.iteration}";
  wf.outputParameters = { double: "${double.output.result}", jq: "${jq.output.result}",
                          loop: "${loop.output}", eight: "${workflow.variables.eight}" };
  await metadata.registerWorkflowDef(wf, true);
  const id = await workflows.startWorkflow({ name: "sdk_builders", version: 1, input: { n: 4 } });
  const done = await eventually(async () => {
    const wf = await workflows.getWorkflow(id, false);
    if (wf.status === "RUNNING") throw new Error("still RUNNING");
    return wf;
  }, 30000, "the SDK-built workflow ends");
  check(done.status === "COMPLETED", `the SDK-built workflow ended ${done.status}: ${done.reasonForIncompletion}`);
  check(done.output.double === 8, `INLINE result: ${JSON.stringify(done.output.double)}`);
  check(JSON.stringify(done.output.jq) === JSON.stringify({ key3: ["a", "b", "d", "e"] }),
        `JSON_JQ_TRANSFORM result: ${JSON.stringify(done.output.jq)}`);
  check(done.output.loop.iteration === 3 && done.output.loop["3"].inner.result === 4,
        `DO_WHILE output: ${JSON.stringify(done.output.loop)}`);
  check(done.output.eight === true, "the SWITCH took case 8");
  console.log("a workflow built with the SDK's builders completed: " + JSON.stringify(done.output));
}

// The SDK's SchedulerClient: a schedule saved, read, listed, paused and resumed (the SDK tries
// PUT, then GET), its next times, a workflow it started, and deleted.
async function scheduledBySdk(scheduler) {
  await scheduler.saveSchedule({
    name: "sdk_every_second", cronExpression: "* * * ? * *", zoneId: "Europe/Berlin",
    startWorkflowRequest: { name: "sdk_builders", version: 1, input: { n: 4 } },
    runCatchupScheduleInstances: false, paused: false,
  });
  const saved = await scheduler.getSchedule("sdk_every_second");
  check(saved.cronExpression === "* * * ? * *" && saved.zoneId === "Europe/Berlin",
        `the schedule read back: ${JSON.stringify(saved)}`);
  const all = await scheduler.getAllSchedules("sdk_builders");
  check(all.length === 1 && all[0].name === "sdk_every_second", `the list: ${JSON.stringify(all)}`);
  const started = await eventually(async () => {
    const s = await scheduler.getSchedule("sdk_every_second");
    if (!s.lastWorkflowId) throw new Error("no workflow started yet");
    return s.lastWorkflowId;
  }, 15000, "the schedule starts a workflow");
  await scheduler.pauseSchedule("sdk_every_second", "sdk test");
  const paused = await scheduler.getSchedule("sdk_every_second");
  check(paused.paused === true && paused.pausedReason === "sdk test", "the schedule is paused");
  await scheduler.resumeSchedule("sdk_every_second");
  check((await scheduler.getSchedule("sdk_every_second")).paused === false, "resumed");
  const next = await scheduler.getNextFewSchedules("0 0 12 * * ?", 1743206400000, undefined, 2);
  check(JSON.stringify(next) === "[1743249600000,1743336000000]", `next times: ${JSON.stringify(next)}`);
  await scheduler.deleteSchedule("sdk_every_second");
  console.log("a schedule made with the SDK's SchedulerClient started " + started);
}

// Lookups and commands as the SDK makes them: a status summary, the workflows of a
// correlation id, a task skipped ahead, variables set, a definition's running workflows,
// pause, resume and terminate in bulk, and a removal.
async function lookedUpBySdk(admin, metadata, workflows) {
  await metadata.registerWorkflowDef({
    name: "sdk_held", version: 1, schemaVersion: 2,
    tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" },
            { name: "later", taskReferenceName: "later", type: "WAIT" }],
  }, true);
  const ids = [];
  for (let i = 0; i < 2; ++i)
    ids.push(await workflows.startWorkflow({ name: "sdk_held", version: 1, input: { i },
                                             correlationId: "sdk-order" }));
  const summary = await workflows.getWorkflowStatus(ids[0], true, true);
  check(summary.workflowId === ids[0] && summary.status === "RUNNING"
        && summary.correlationId === "sdk-order", `the status summary: ${JSON.stringify(summary)}`);
  const byCorrelation = await workflows.getByCorrelationIds(
    { workflowNames: ["sdk_held"], correlationIds: ["sdk-order", "sdk-none"] }, false, true);
  const found = (byCorrelation["sdk-order"] || []).map((w) => w.workflowId).sort();
  check(JSON.stringify(found) === JSON.stringify([...ids].sort())
        && byCorrelation["sdk-none"].length === 0
        && byCorrelation["sdk-order"][0].tasks.length === 1,
        `the workflows of a correlation id: ${JSON.stringify(byCorrelation)}`);
  // A task skipped ahead, and variables set from outside, through the workflow client.
  await workflows.skipTasksFromWorkflow(ids[1], "later", { taskOutput: { skippedBy: "sdk" } });
  await workflows.updateTaskByRefName("hold", ids[1], "COMPLETED", {});
  const skipped = await eventually(async () => {
    const wf = await workflows.getWorkflow(ids[1], true);
    if (wf.status !== "COMPLETED") throw new Error("still " + wf.status);
    return wf;
  }, 20000, "the workflow passes the skipped task");
  const later = skipped.tasks.find((t) => t.referenceTaskName === "later");
  check(later && later.status === "SKIPPED" && later.outputData.skippedBy === "sdk",
        `the skipped task: ${JSON.stringify(later)}`);
  const withVariables = await workflows.updateVariables(ids[0], { stage: "review" });
  check(withVariables.variables.stage === "review", `variables: ${JSON.stringify(withVariables.variables)}`);
  ids.push(await workflows.startWorkflow({ name: "sdk_held", version: 1, input: {},
                                           correlationId: "sdk-order" }));
  ids.splice(1, 1);
  const legacy = admin.getClient();
  const running = await legacy.workflowResource.getRunningWorkflow("sdk_held", 1);
  check(JSON.stringify([...running].sort()) === JSON.stringify([...ids].sort()),
        `the running workflows: ${JSON.stringify(running)}`);
  const paused = await legacy.workflowBulkResource.pauseWorkflow1([...ids, "not-an-id"]);
  check(paused.bulkSuccessfulResults.length === 2 && paused.bulkErrorResults["not-an-id"],
        `bulk pause: ${JSON.stringify(paused)}`);
  check((await workflows.getWorkflowStatus(ids[1])).status === "PAUSED", "paused in bulk");
  await legacy.workflowBulkResource.resumeWorkflow(ids);
  check((await workflows.getWorkflowStatus(ids[1])).status === "RUNNING", "resumed in bulk");
  // Nothing of it waits out a delay: resetcallbacks answers and changes nothing.
  await legacy.workflowResource.resetWorkflow(ids[1]);
  check((await workflows.getWorkflowStatus(ids[1])).status === "RUNNING", "callbacks reset");
  const ended = await legacy.workflowBulkResource.terminate(ids, "sdk cleanup");
  check(ended.bulkSuccessfulResults.length === 2, `bulk terminate: ${JSON.stringify(ended)}`);
  const after = await workflows.getWorkflow(ids[0], false);
  check(after.status === "TERMINATED" && after.reasonForIncompletion === "sdk cleanup",
        `terminated in bulk: ${after.status} ${after.reasonForIncompletion}`);
  // Removal: the SDK archives by default, which nodeflow refuses (it keeps no archive beside
  // its tables); without archiving the workflow is deleted for good.
  let refused = null;
  try { await workflows.deleteWorkflow(ids[0]); } catch (e) { refused = e; }
  check(refused && String(refused.message).includes("archiveWorkflow"),
        `a removal with archiving refused: ${refused && refused.message}`);
  await workflows.deleteWorkflow(ids[0], false);
  let gone = null;
  try { await workflows.getWorkflow(ids[0], false); } catch (e) { gone = e; }
  check(gone && String(gone.message).includes("not found"),
        `the removed workflow is gone: ${gone && gone.message}`);
  const found5 = await admin.getTaskClient().search(0, 5, "", "*", "taskType = sdk_greet");
  check(found5.results.length === 5 && found5.results.every((t) => t.taskType === "sdk_greet"),
        `task search: ${JSON.stringify(found5).slice(0, 300)}`);
  // Poll data: the SDK's workers have been polling sdk_greet under the machine's host name.
  const polls = await admin.getTaskClient().getTaskPollData("sdk_greet");
  check(polls.length > 0 && polls.every((p) => p.queueName === "sdk_greet" && p.workerId
                                            && Date.now() - p.lastPollTime < 120000),
        `poll data: ${JSON.stringify(polls)}`);
  // decide on an ended workflow answers and changes nothing.
  await legacy.workflowResource.decide(ids[1]);
  check((await workflows.getWorkflowStatus(ids[1])).status === "TERMINATED", "decided again");
  console.log("lookups and bulk commands through the SDK answered for " + ids.join(", "));
}

// A synchronous execution that answers where the workflow blocks, and signals that complete
// the WAIT it is blocked on without naming it, as the SDK's executor makes them.
async function signalledBySdk(metadata, workflows) {
  await metadata.registerWorkflowDef({
    name: "sdk_gates", version: 1, schemaVersion: 2,
    tasks: [{ name: "first", taskReferenceName: "first", type: "WAIT" },
            { name: "second", taskReferenceName: "second", type: "WAIT" }],
    outputParameters: { second: "${second.output}" },
  }, true);
  const blocked = await workflows.executeWorkflow(
    { name: "sdk_gates", version: 1, input: { order: 7 } }, "sdk_gates", 1, "sdk-req-1", "", 10,
    undefined, "BLOCKING_TASK");
  check(blocked.isBlockingTask() && blocked.getBlockingTask().referenceTaskName === "first"
        && blocked.getBlockingTask().status === "IN_PROGRESS",
        `executeWorkflow answers the blocking task: ${blocked.getSummary()}`);
  const id = blocked.getTargetWorkflowId();
  // The SDK sends the output wrapped as {taskOutput}: the body is the task's output.
  const next = await workflows.signal(id, "COMPLETED", { approved: true });
  const wf = next.getWorkflow();
  check(next.isTargetWorkflow() && next.isRunning() && wf.workflowId === id
        && wf.tasks[0].outputData.taskOutput.approved === true
        && wf.tasks[1].referenceTaskName === "second" && wf.tasks[1].status === "IN_PROGRESS",
        `signal answers the workflow blocked at its next WAIT: ${next.getSummary()}`);
  await workflows.signalAsync(id, "COMPLETED", { last: 1 });
  const done = await eventually(async () => {
    const w = await workflows.getWorkflow(id, false);
    if (w.status !== "COMPLETED") throw new Error("still " + w.status);
    return w;
  }, 20000, "the workflow ends after the second signal");
  check(done.output.second.taskOutput.last === 1, `the output: ${JSON.stringify(done.output)}`);
  console.log("executeWorkflow and signals through the SDK answered for " + id);

  // The executor's updateState: variables and the first WAIT in one request, answered
  // where the workflow blocks next.
  const again = (await workflows.executeWorkflow(
    { name: "sdk_gates", version: 1, input: { order: 8 } }, "sdk_gates", 1, "sdk-req-2", "", 10,
    undefined, "BLOCKING_TASK")).getTargetWorkflowId();
  const run = await workflows.updateState(again, {
    taskReferenceName: "first",
    taskResult: { status: "COMPLETED", outputData: { approved: "state" } },
    variables: { stage: "second" },
  }, "sdk-state-1", undefined, 10);
  check(run.workflowId === again && run.requestId === "sdk-state-1"
        && run.variables.stage === "second"
        && run.tasks[0].status === "COMPLETED" && run.tasks[0].outputData.approved === "state"
        && run.tasks[1].referenceTaskName === "second" && run.tasks[1].status === "IN_PROGRESS",
        `updateState answers the workflow blocked at its next WAIT: ${JSON.stringify(run)}`);
  let refused = null;
  try {
    await workflows.updateState(again, { taskReferenceName: "first",
                                         taskResult: { status: "COMPLETED" } });
  } catch (e) {
    refused = e;
  }
  check(refused && /only a WAIT or HUMAN task still waiting/.test(refused.message),
        `updateState of a task that ended is refused: ${refused && refused.message}`);
  await workflows.terminate(again, "done with it");
  console.log("updateState through the SDK answered for " + again);
}

const run = process.argv[2] === "victim" ? victim : main;
run().then(
  () => { if (run === main) process.exit(0); },
  (e) => { console.error(e); process.exit(1); });
