// acp2 interop test client: an ACP v2 client built on the official TypeScript SDK
// (experimental/v2 entrypoint). It spawns an agent, runs one scenario, and prints ONE
// JSON report on stdout (the agent's stdout is the pipe to the agent; the agent's
// stderr is passed through to ours).
//
//   node client.mjs [--sdk DIR] --scenario NAME [--cwd DIR] [--count N]
//                   [--prompt TEXT] [--timeout SECONDS] -- AGENT_ARGV...
//   node --experimental-websocket client.mjs --url URL --remote ws|http [options]
//
// With --url, no agent is spawned: the client drives a remote agent through the SDK's
// experimental ws-client (Node 20 needs --experimental-websocket for its global
// WebSocket) or http-client (Streamable HTTP).
//
// --prompt replaces the prompt text of the single-prompt scenarios (echo, stream,
// tools-*, kinds, fail), for agents whose scenario words differ (e.g. "all").
//
// Scenarios (prompts use the words the test agents understand, see agent.mjs):
//   echo                 prompt "echo hello world"
//   stream               prompt "stream <count>" (--count, default 5)
//   tools-allow          prompt "tools", permission answered with the allow_once option
//   tools-reject         prompt "tools", permission answered with the reject_once option
//   cancel               prompt "wait", session/cancel once running
//   cancel-permission    prompt "tools", session/cancel while the permission is open,
//                        then the permission is answered "cancelled" (unless the agent
//                        already withdrew it with $/cancel_request)
//   cancel-permission-wait  as above, but the permission is answered only when the
//                        agent sends $/cancel_request for it (Nov behaviour)
//   resume               prompt "echo first", session/close, session/resume with
//                        replayFrom start (records the replay), prompt "echo second"
//   list                 two sessions, a prompt, session/list without and with cwd
//   close                prompt "wait", session/close while running, close an unknown id
//   ext                  prompt "ext", request "_acp2/echo" (its result, or its error
//                        in extra.echoError), notification "_acp2/ping"
//   kinds                prompt "kinds"
//   fail                 prompt "fail"
//
// The report: {ok, scenario, agentArgv, initialize, sessionId, events, sdkUpdates,
// stopReasons, text, permissions, extra, agentExit, error?}.
//
// `events` is the wire-order timeline of every JSON-RPC message in both directions,
// observed on the stream between this client's SDK connection and the agent's pipes
// (the SDK may run handlers for notifications after it resolves a later response, so
// handler order is not wire order):
//   {type: "request", id, method, params}        request sent by this client
//   {type: "response", id, method, result}       its answer (or {type: "error", ..., error})
//   {type: "notify", method, params}             notification sent by this client
//   {type: "update", sessionId, update}          session/update received
//   {type: "notification", method, params}       any other notification received
//   {type: "permission", id, params}             session/request_permission received
//   {type: "answer", id, method, result|error}   this client's answer to an agent request
//   {type: "agent_request", id, method, params}  any other request received
// `sdkUpdates` are the session/update params as the SDK's handler received them
// (parsed and validated by the SDK), in handler order; `permissions` are the
// permission requests with the outcome this client chose and why.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { loadRemote, loadSdk, log } from "./sdk.mjs";

const NAME = "ts-client";
const SCENARIOS = [
  "echo",
  "stream",
  "tools-allow",
  "tools-reject",
  "cancel",
  "cancel-permission",
  "cancel-permission-wait",
  "resume",
  "list",
  "close",
  "ext",
  "kinds",
  "fail",
  "background",
];

function parseCommandLine(argv) {
  const remote = argv.includes("--url");
  const split = argv.includes("--") ? argv.indexOf("--") : argv.length;
  if (!remote && (split === argv.length || split === argv.length - 1)) {
    throw new Error("usage: client.mjs [--sdk DIR] --scenario NAME [options] -- AGENT_ARGV...");
  }
  const { values } = parseArgs({
    args: argv.slice(0, split),
    options: {
      sdk: { type: "string" },
      scenario: { type: "string" },
      cwd: { type: "string" },
      count: { type: "string" },
      prompt: { type: "string" },
      timeout: { type: "string" },
      url: { type: "string" },
      remote: { type: "string" },
    },
    strict: true,
  });
  if (!SCENARIOS.includes(values.scenario)) {
    throw new Error(`--scenario must be one of ${SCENARIOS.join(", ")}`);
  }
  return {
    sdk: values.sdk,
    scenario: values.scenario,
    cwd: values.cwd ?? process.cwd(),
    count: Number.parseInt(values.count ?? "5", 10),
    prompt: values.prompt,
    timeoutMs: Number.parseFloat(values.timeout ?? "30") * 1000,
    agentArgv: argv.slice(split + 1),
    url: values.url,
    remote: values.remote ?? "ws",
  };
}

const options = parseCommandLine(process.argv.slice(2));
const acp = await loadSdk(options.sdk);

// ---------------------------------------------------------------- the recorder

const report = {
  ok: false,
  scenario: options.scenario,
  agentArgv: options.agentArgv,
  initialize: null,
  sessionId: null,
  events: [],
  sdkUpdates: [],
  stopReasons: [],
  text: "",
  permissions: [],
  extra: {},
  agentExit: null,
};
const watchers = new Set();
const sentRequests = new Map(); // id -> method, requests this client sent
const receivedRequests = new Map(); // id -> method, requests the agent sent

function record(event) {
  report.events.push(event);
  for (const watcher of [...watchers]) {
    watcher();
  }
}

function outcomeOf(message) {
  return "error" in message ? { error: message.error } : { result: message.result };
}

function observeOutgoing(message) {
  if ("method" in message && "id" in message) {
    sentRequests.set(message.id, message.method);
    record({ type: "request", id: message.id, method: message.method, params: message.params });
  } else if ("method" in message) {
    record({ type: "notify", method: message.method, params: message.params });
  } else {
    record({ type: "answer", id: message.id, method: receivedRequests.get(message.id) ?? null, ...outcomeOf(message) });
  }
}

function observeIncoming(message) {
  if (Array.isArray(message) || typeof message !== "object" || message === null) {
    record({ type: "invalid", message });
  } else if ("method" in message && "id" in message) {
    receivedRequests.set(message.id, message.method);
    const type = message.method === "session/request_permission" ? "permission" : "agent_request";
    record({ type, id: message.id, method: message.method, params: message.params });
  } else if (message.method === "session/update") {
    record({ type: "update", sessionId: message.params?.sessionId, update: message.params?.update });
  } else if ("method" in message) {
    record({ type: "notification", method: message.method, params: message.params ?? null });
  } else {
    const type = "error" in message ? "error" : "response";
    record({ type, id: message.id, method: sentRequests.get(message.id) ?? null, ...outcomeOf(message) });
  }
}

// Puts an observer on both directions of an SDK stream, in wire order.
function observed(stream) {
  const incoming = new TransformStream({
    transform(message, controller) {
      observeIncoming(message);
      controller.enqueue(message);
    },
  });
  // Each outgoing message is recorded as its write starts and the write is awaited, so
  // the last write still in flight (over HTTP: a POST) can be awaited before exiting:
  // otherwise a message the report lists might never reach the agent.
  const writer = stream.writable.getWriter();
  const outgoing = new WritableStream({
    write(message) {
      observeOutgoing(message);
      inFlight = writer.write(message);
      return inFlight;
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable: stream.readable.pipeThrough(incoming), writable: outgoing };
}

// The write in flight (see observed), settled before the process exits.
let inFlight = Promise.resolve();

// Resolves with the first event at index >= `from` matching `predicate`.
function waitFor(predicate, what, from = 0) {
  return new Promise((resolve, reject) => {
    const check = () => {
      for (let i = from; i < report.events.length; i++) {
        if (predicate(report.events[i])) {
          cleanup();
          resolve(report.events[i]);
          return true;
        }
      }
      return false;
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${what}`));
    }, options.timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      watchers.delete(check);
    };
    if (!check()) {
      watchers.add(check);
    }
  });
}

const isUpdate = (sessionId, kind) => (e) =>
  e.type === "update" && e.sessionId === sessionId && (kind === undefined || e.update?.sessionUpdate === kind);
const isState = (sessionId, state) => (e) => isUpdate(sessionId, "state_update")(e) && e.update.state === state;

// ---------------------------------------------------------------- permissions

const pendingPermissions = [];

function pickOption(params, kind) {
  return params.options.find((o) => o.kind === kind) ?? params.options.find((o) => o.kind.startsWith(kind.split("_")[0]));
}

function answerPermission(params, signal) {
  const answer = (outcome, via) => {
    report.permissions.push({ params, outcome, via });
    return { outcome };
  };
  const wanted = { "tools-allow": "allow_once", "tools-reject": "reject_once" }[options.scenario];
  if (wanted) {
    const option = pickOption(params, wanted);
    return option
      ? answer({ outcome: "selected", optionId: option.optionId }, "policy")
      : answer({ outcome: "cancelled" }, "policy");
  }
  if (!options.scenario.startsWith("cancel-permission")) {
    return answer({ outcome: "cancelled" }, "unexpected");
  }
  // Held open until session/cancel (or the agent's $/cancel_request) settles it.
  return new Promise((resolve) => {
    let settled = false;
    const settle = (via) => {
      if (!settled) {
        settled = true;
        resolve(answer({ outcome: "cancelled" }, via));
      }
    };
    signal.addEventListener("abort", () => settle("$/cancel_request"), { once: true });
    pendingPermissions.push({ params, settle });
  });
}

// ---------------------------------------------------------------- calls

function makeCalls(cx) {
  const call = (method, params) => cx.request(method, params);
  const notify = (method, params) => cx.notify(method, params);
  const newSession = async () => (await call("session/new", { cwd: options.cwd, mcpServers: [] })).sessionId;
  const prompt = async (sessionId, text) => {
    const from = report.events.length;
    const result = await call("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    return { from, messageId: result.messageId };
  };
  const untilIdle = (sessionId, from) => waitFor(isState(sessionId, "idle"), `idle on ${sessionId}`, from);
  const turn = async (sessionId, text) => {
    const { from, messageId } = await prompt(sessionId, text);
    const idle = await untilIdle(sessionId, from);
    return { from, messageId, idle };
  };
  return { call, notify, newSession, prompt, untilIdle, turn };
}

// ---------------------------------------------------------------- scenarios

async function cancelPermission(c, sessionId, waitForAgent) {
  const { from } = await c.prompt(sessionId, "tools");
  const asked = await waitFor((e) => e.type === "permission", "session/request_permission", from);
  const cancelAt = report.events.length;
  await c.notify("session/cancel", { sessionId });
  if (!waitForAgent) {
    // Every pending permission of the cancelled work is answered "cancelled".
    for (const pending of pendingPermissions.splice(0)) {
      pending.settle("session/cancel");
    }
  }
  await c.untilIdle(sessionId, cancelAt);
  // The answer to the withdrawn question may be written after the idle (the SDK writes it
  // once the handler settles): the scenario ends only once that write is done, or the
  // connection could close under it and the report would list a frame never delivered.
  await waitFor((e) => e.type === "answer" && e.id === asked.id, "the permission's answer", from);
  await inFlight;
}

// The prompt of a single-prompt scenario: `fallback`, unless --prompt replaces it.
function promptOf(fallback) {
  report.extra.prompt = options.prompt ?? fallback;
  return report.extra.prompt;
}

const RUNNERS = {
  echo: (c, sid) => c.turn(sid, promptOf("echo hello world")),
  stream: (c, sid) => {
    report.extra.count = options.count;
    return c.turn(sid, promptOf(`stream ${options.count}`));
  },
  "tools-allow": (c, sid) => c.turn(sid, promptOf("tools")),
  "tools-reject": (c, sid) => c.turn(sid, promptOf("tools")),
  kinds: (c, sid) => c.turn(sid, promptOf("kinds")),
  fail: (c, sid) => c.turn(sid, promptOf("fail")),
  async cancel(c, sid) {
    const { from } = await c.prompt(sid, "wait");
    await waitFor(isState(sid, "running"), "running", from);
    const cancelAt = report.events.length;
    await c.notify("session/cancel", { sessionId: sid });
    await c.untilIdle(sid, cancelAt);
  },
  "cancel-permission": (c, sid) => cancelPermission(c, sid, false),
  "cancel-permission-wait": (c, sid) => cancelPermission(c, sid, true),
  async resume(c, sid) {
    await c.turn(sid, "echo first");
    await c.call("session/close", { sessionId: sid });
    const from = report.events.length;
    await c.call("session/resume", { sessionId: sid, cwd: options.cwd, mcpServers: [], replayFrom: { type: "start" } });
    const request = report.events.findIndex((e, i) => i >= from && e.type === "request" && e.method === "session/resume");
    const response = report.events.findIndex((e, i) => i > request && e.id === report.events[request].id && e.type === "response");
    report.extra.replayed = report.events.slice(request, response).filter(isUpdate(sid)).map((e) => e.update);
    await c.turn(sid, "echo second");
  },
  async list(c, sid) {
    const other = await c.newSession();
    await c.turn(sid, "echo listed");
    report.extra.otherSessionId = other;
    report.extra.all = await c.call("session/list", {});
    report.extra.byCwd = await c.call("session/list", { cwd: options.cwd });
    report.extra.otherCwd = await c.call("session/list", { cwd: "/nonexistent/acp2-interop" });
  },
  async close(c, sid) {
    const { from } = await c.prompt(sid, "wait");
    await waitFor(isState(sid, "running"), "running", from);
    report.extra.closeResult = await c.call("session/close", { sessionId: sid });
    report.extra.unknownCloseResult = await c.call("session/close", { sessionId: "sess_unknown_acp2" });
  },
  // RFD "v2 Background Work": the idle lists the items; each is cancelled alone
  // (tool_call/cancel, terminal/cancel) and must leave a later snapshot's list.
  async background(c, sid) {
    const { idle } = await c.turn(sid, promptOf("background"));
    const listed = idle.update.background ?? [];
    report.extra.listed = listed;
    report.extra.cancelled = [];
    for (const item of listed) {
      const terminal = item.type === "terminal";
      const id = terminal ? item.terminalId : item.toolCallId;
      const from = report.events.length;
      const params = terminal ? { sessionId: sid, terminalId: id } : { sessionId: sid, toolCallId: id };
      const result = await c.call(terminal ? "terminal/cancel" : "tool_call/cancel", params);
      report.extra.cancelled.push({ id, result });
      const gone = (e) =>
        isState(sid, "idle")(e) &&
        Array.isArray(e.update.background) &&
        !e.update.background.some((b) => (b.terminalId ?? b.toolCallId) === id);
      await waitFor(gone, `${id} to leave the background`, from);
    }
  },
  async ext(c, sid) {
    await c.turn(sid, "ext");
    try {
      report.extra.echo = await c.call("_acp2/echo", { value: 42 });
    } catch (error) {
      // An agent without this extension must answer -32601 (method not found).
      report.extra.echoError = { code: error?.code ?? null, message: String(error?.message ?? error) };
    }
    await c.notify("_acp2/ping", { sessionId: sid });
  },
};

function summarize() {
  const sid = report.sessionId;
  for (const e of report.events) {
    if (e.type !== "update" || e.sessionId !== sid) {
      continue;
    }
    const u = e.update;
    if (u.sessionUpdate === "state_update" && u.state === "idle") {
      report.stopReasons.push(u.stopReason ?? null);
    } else if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") {
      report.text += u.content.text;
    }
  }
}

// ---------------------------------------------------------------- main

async function run(cx) {
  const c = makeCalls(cx);
  report.initialize = await c.call("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "acp2-interop-ts-client", version: "2.4.0" },
    capabilities: {},
  });
  report.sessionId = await c.newSession();
  await RUNNERS[options.scenario](c, report.sessionId);
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

async function stopAgent(child, exited) {
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGTERM"), 5000);
  report.agentExit = await exited;
  clearTimeout(timer);
}

async function remoteStream() {
  const transports = await loadRemote(options.remote, options.sdk);
  return options.remote === "ws"
    ? transports.createWebSocketStream(options.url)
    : transports.createHttpStream(options.url);
}

async function main() {
  const { child, exited } = options.url ? { child: null, exited: new Promise(() => {}) } : spawnAgent();
  const app = acp
    .client({ name: NAME })
    .onNotification("session/update", ({ params }) => {
      report.sdkUpdates.push(params);
    })
    .onRequest("session/request_permission", ({ params, signal }) => answerPermission(params, signal));
  const stream = observed(
    child ? acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)) : await remoteStream(),
  );
  // Each wait is bounded by --timeout; the whole scenario by twice that.
  const overallMs = options.timeoutMs * 2;
  const deadline = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`scenario timed out after ${overallMs} ms`)), overallMs).unref(),
  );
  let failure = null;
  try {
    await Promise.race([app.connectWith(stream, run), deadline, exited.then((e) => {
      throw new Error(`agent exited early: ${JSON.stringify(e)}`);
    })]);
  } catch (error) {
    failure = error;
  }
  if (child) {
    await stopAgent(child, exited);
  }
  // Bounded: a write the server never answers must not keep the report from being printed.
  await Promise.race([inFlight.catch(() => {}), new Promise((r) => setTimeout(r, 5000).unref())]);
  summarize();
  if (failure) {
    report.error = String(failure?.stack ?? failure);
    log(NAME, `scenario ${options.scenario} failed:`, report.error);
  } else {
    report.ok = true;
  }
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(report.ok ? 0 : 1));
}

await main();
