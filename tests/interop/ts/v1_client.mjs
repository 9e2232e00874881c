// acp2 interop test client: an ACP v1 client built on the official TypeScript SDK's
// stable entrypoint (the package's main entry). It spawns an agent, runs one or more
// scenarios on one connection (one session each, in order) and prints ONE JSON report
// on stdout.
//
//   node v1_client.mjs [--sdk DIR] --scenario NAME[,NAME...] [--cwd DIR] [--count N]
//                      [--prompt TEXT] [--timeout SECONDS] -- AGENT_ARGV...
//
// initialize asks for protocolVersion 1 and offers clientCapabilities.fs.readTextFile;
// fs/read_text_file is served below --cwd (a missing file answers -32002, a path
// outside -32602). Scenarios (the words of v1_agent.mjs and py/v1_agent.py):
//   echo, stream (--count), kinds, fail   one prompt ("echo hello world", ...)
//   tools-allow / tools-reject            prompt "tools", the permission answered with
//                                         its allow_once / reject_once option
//   read                                  prompt "read hello.txt" (served by fs)
//   cancel                                prompt "wait", session/cancel on the first chunk
//   cancel-permission                     prompt "tools", session/cancel while the
//                                         permission is open, then the permission
//                                         answered "cancelled" (the v1 rule)
//   load                                  prompt "echo first", session/load of the same
//                                         session (extra.replayed), prompt "echo second"
// --prompt replaces the prompt of the one-prompt scenarios.
//
// The report: {ok, agentArgv, initialize, events, sdkUpdates, runs, agentExit, error?}.
// `events` is the wire-order timeline of the connection, in the event shapes of
// client.mjs ({type: "request" | "response" | "error" | "notify" | "update" |
// "permission" | "agent_request" | "answer" | "notification", ...}); `sdkUpdates` the
// session/update params as the SDK's handler received them. Each run is
// {scenario, sessionId, events (its slice of the timeline), sdkUpdates (its
// session's), stopReasons (from the session/prompt responses; null for an error, whose
// code is in extra.promptErrors), text (its agent_message_chunk texts), permissions
// ({options, outcome, via}), extra}.

import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { loadStableSdk, log } from "./sdk.mjs";

const NAME = "ts-v1-client";
const PROMPTS = {
  echo: "echo hello world",
  kinds: "kinds",
  fail: "fail",
  "tools-allow": "tools",
  "tools-reject": "tools",
  read: "read hello.txt",
};
const WANTED = { "tools-allow": "allow_once", "tools-reject": "reject_once" };
const SCENARIOS = [...Object.keys(PROMPTS), "stream", "cancel", "cancel-permission", "load"];

const USAGE = "usage: v1_client.mjs [--sdk DIR] --scenario NAME[,NAME...] [options] -- AGENT_ARGV...";

function parseCommandLine(args) {
  const names = ["sdk", "scenario", "cwd", "count", "prompt", "timeout"];
  const { values, positionals: agentArgv } = parseArgs({
    args,
    options: Object.fromEntries(names.map((name) => [name, { type: "string" }])),
    allowPositionals: true, // only after "--": the agent's command line
    strict: true,
  });
  const split = args.indexOf("--");
  if (split < 0 || agentArgv.length === 0 || agentArgv.length !== args.length - split - 1) {
    throw new Error(USAGE);
  }
  const scenarios = (values.scenario ?? "").split(",");
  const unknown = scenarios.filter((s) => !SCENARIOS.includes(s));
  if (unknown.length > 0) {
    throw new Error(`unknown scenario(s) ${unknown.join(", ")}; expected ${SCENARIOS.join(", ")}`);
  }
  return {
    sdk: values.sdk,
    scenarios,
    cwd: resolve(values.cwd ?? process.cwd()),
    count: Number.parseInt(values.count ?? "5", 10),
    prompt: values.prompt,
    timeoutMs: Number.parseFloat(values.timeout ?? "30") * 1000,
    agentArgv,
  };
}

const options = parseCommandLine(process.argv.slice(2));
const acp = await loadStableSdk(options.sdk);
const { RequestError } = acp;

// ---------------------------------------------------------------- the timeline

// Records both directions of an SDK stream in wire order and lets the scenarios wait
// for an event (each wait bounded by --timeout).
class Timeline {
  constructor() {
    this.events = [];
    this.sent = new Map(); // id -> method, requests this client sent
    this.received = new Map(); // id -> method, requests the agent sent
    this.waiters = new Set();
  }

  push(event) {
    this.events.push(event);
    for (const waiter of [...this.waiters]) {
      waiter();
    }
  }

  static outcome(message) {
    return "error" in message ? { error: message.error } : { result: message.result };
  }

  outgoing(message) {
    const { id, method, params } = message;
    if (method !== undefined && id !== undefined) {
      this.sent.set(id, method);
      this.push({ type: "request", id, method, params });
    } else if (method !== undefined) {
      this.push({ type: "notify", method, params });
    } else {
      this.push({ type: "answer", id, method: this.received.get(id) ?? null, ...Timeline.outcome(message) });
    }
  }

  incoming(message) {
    const { id, method, params } = message ?? {};
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.push({ type: "invalid", message });
    } else if (method !== undefined && id !== undefined) {
      this.received.set(id, method);
      this.push({ type: method === "session/request_permission" ? "permission" : "agent_request", id, method, params });
    } else if (method === "session/update") {
      this.push({ type: "update", sessionId: params?.sessionId, update: params?.update });
    } else if (method !== undefined) {
      this.push({ type: "notification", method, params: params ?? null });
    } else {
      const type = "error" in message ? "error" : "response";
      this.push({ type, id, method: this.sent.get(id) ?? null, ...Timeline.outcome(message) });
    }
  }

  // `stream` with both of its directions passing through this timeline.
  observe(stream) {
    const tap = (record) =>
      new TransformStream({
        transform(message, controller) {
          record(message);
          controller.enqueue(message);
        },
      });
    const outgoing = tap((m) => this.outgoing(m));
    void outgoing.readable.pipeTo(stream.writable).catch(() => {});
    return { readable: stream.readable.pipeThrough(tap((m) => this.incoming(m))), writable: outgoing.writable };
  }

  // The first event at index >= `from` matching `predicate`.
  waitFor(predicate, what, from) {
    return new Promise((done, fail) => {
      const check = () => {
        const found = this.events.slice(from).find(predicate);
        if (found !== undefined) {
          clearTimeout(timer);
          this.waiters.delete(check);
          done(found);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        fail(new Error(`timed out waiting for ${what}`));
      }, options.timeoutMs);
      this.waiters.add(check);
      check();
    });
  }
}

const timeline = new Timeline();
const sdkUpdates = [];
let current = null; // the run in progress

// ---------------------------------------------------------------- client handlers

function answerPermission(params) {
  const run = current;
  const answer = (outcome, via) => {
    run.permissions.push({ options: params.options, outcome, via });
    return { outcome };
  };
  const wanted = WANTED[run.scenario];
  if (wanted) {
    const option = params.options.find((o) => o.kind === wanted);
    return answer(option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" }, "policy");
  }
  if (run.scenario !== "cancel-permission") {
    return answer({ outcome: "cancelled" }, "unexpected");
  }
  // v1: a permission still open when the client cancels the turn is answered cancelled.
  return run.cancelled.then(() => answer({ outcome: "cancelled" }, "session/cancel"));
}

async function serveRead(params) {
  const reads = (current.extra.reads ??= []);
  const rel = relative(options.cwd, params.path);
  if (!isAbsolute(params.path) || rel.startsWith("..") || isAbsolute(rel)) {
    reads.push({ path: params.path, code: -32602 });
    throw RequestError.invalidParams({ path: params.path }, "outside the session's cwd");
  }
  try {
    const content = await readFile(params.path, "utf8");
    reads.push({ path: params.path, ok: true });
    return { content };
  } catch (error) {
    if (error?.code !== "ENOENT") {
      throw error;
    }
    reads.push({ path: params.path, code: -32002 });
    throw RequestError.resourceNotFound(params.path);
  }
}

// ---------------------------------------------------------------- scenarios

const isUpdateOf = (sessionId, kind) => (e) =>
  e.type === "update" && e.sessionId === sessionId && (kind === undefined || e.update?.sessionUpdate === kind);

async function prompt(cx, run, text) {
  try {
    const response = await cx.request("session/prompt", { sessionId: run.sessionId, prompt: [{ type: "text", text }] });
    run.stopReasons.push(response.stopReason);
  } catch (error) {
    (run.extra.promptErrors ??= []).push({ code: error?.code ?? null });
    run.stopReasons.push(null);
  }
}

// Prompts `text` and sends session/cancel once an event matches `predicate`.
async function cancelWhen(cx, run, text, predicate, what) {
  const from = timeline.events.length;
  const turn = prompt(cx, run, text);
  await timeline.waitFor(predicate, what, from);
  await cx.notify("session/cancel", { sessionId: run.sessionId });
  run.cancel();
  await turn;
}

async function load(cx, run) {
  await prompt(cx, run, "echo first");
  const from = timeline.events.length;
  await cx.request("session/load", { sessionId: run.sessionId, cwd: options.cwd, mcpServers: [] });
  run.extra.replayed = timeline.events
    .slice(from)
    .filter(isUpdateOf(run.sessionId))
    .map((e) => e.update);
  await prompt(cx, run, "echo second");
}

const RUNNERS = {
  stream(cx, run) {
    run.extra.count = options.count;
    return prompt(cx, run, options.prompt ?? `stream ${options.count}`);
  },
  cancel: (cx, run) => cancelWhen(cx, run, "wait", isUpdateOf(run.sessionId, "agent_message_chunk"), "a chunk"),
  "cancel-permission": (cx, run) => cancelWhen(cx, run, "tools", (e) => e.type === "permission", "a permission"),
  load,
};

function newRun(scenario) {
  let cancel;
  const cancelled = new Promise((resolve) => (cancel = resolve));
  const from = timeline.events.length;
  return { scenario, from, sessionId: null, stopReasons: [], permissions: [], extra: {}, cancelled, cancel };
}

async function runScenario(cx, scenario) {
  const run = (current = newRun(scenario));
  const created = await cx.request("session/new", { cwd: options.cwd, mcpServers: [] });
  run.sessionId = created.sessionId;
  const runner = RUNNERS[scenario] ?? ((c, r) => prompt(c, r, options.prompt ?? PROMPTS[scenario]));
  await runner(cx, run);
  run.to = timeline.events.length;
  return run;
}

// The run as reported: its slice of the timeline, its session's updates and text.
function summarize({ scenario, from, to, sessionId, stopReasons, permissions, extra }) {
  const events = timeline.events.slice(from, to);
  const text = events
    .filter(isUpdateOf(sessionId, "agent_message_chunk"))
    .map((e) => e.update.content?.text ?? "")
    .join("");
  const updates = sdkUpdates.filter((u) => u.sessionId === sessionId);
  return { scenario, sessionId, events, sdkUpdates: updates, stopReasons, text, permissions, extra };
}

// ---------------------------------------------------------------- main

const report = { ok: false, agentArgv: options.agentArgv, initialize: null, runs: [], agentExit: null };

async function run(cx) {
  report.initialize = await cx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientInfo: { name: "acp2-interop-ts-v1-client", version: "2.4.0" },
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
  });
  for (const scenario of options.scenarios) {
    report.runs.push(await runScenario(cx, scenario));
  }
}

function spawnAgent() {
  const [command, ...args] = options.agentArgv;
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    child.on("error", (error) => resolve({ code: null, signal: null, error: String(error) }));
  });
  return { child, exited };
}

async function main() {
  const { child, exited } = spawnAgent();
  const app = acp
    .client({ name: NAME })
    .onNotification("session/update", ({ params }) => {
      sdkUpdates.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => answerPermission(params))
    .onRequest("fs/read_text_file", ({ params }) => serveRead(params));
  const stream = timeline.observe(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const overallMs = options.timeoutMs * 2;
  const deadline = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`scenarios timed out after ${overallMs} ms`)), overallMs).unref(),
  );
  const early = exited.then((e) => {
    throw new Error(`agent exited early: ${JSON.stringify(e)}`);
  });
  try {
    await Promise.race([app.connectWith(stream, run), deadline, early]);
    report.ok = true;
  } catch (error) {
    report.error = String(error?.stack ?? error);
    log(NAME, `scenarios ${options.scenarios} failed:`, report.error);
  }
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGTERM"), 5000);
  report.agentExit = await exited;
  clearTimeout(timer);
  report.events = timeline.events;
  report.sdkUpdates = sdkUpdates;
  report.runs = report.runs.map(summarize);
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(report.ok ? 0 : 1));
}

await main();
