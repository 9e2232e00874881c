// acp2 interop test agent: an ACP v2 agent on stdio, built on the official TypeScript
// SDK (experimental/v2 entrypoint). It is a deterministic peer for acp2's tests, not an
// example of a real agent.
//
//   node agent.mjs [--sdk DIR]
//
// Sessions live in memory. A prompt is answered with {messageId} as soon as it is
// inserted; the turn then reports user_message, state_update running, the scenario's
// output and state_update idle with a stop reason. The scenario is the first word of
// the prompt text:
//
//   echo <text>  one agent_message_chunk with <text>
//   stream <n>   n agent_message_chunks "0," "1," ... on one messageId
//   tools        tool call + session/request_permission (allow_once / reject_once);
//                allowed: in_progress, a diff chunk, a terminal, completed;
//                rejected: failed; outcome "cancelled" (or session/cancel while
//                waiting): tool cancelled and the turn ends "cancelled"
//   wait         runs until session/cancel (or session/close)
//   ext          an unknown "_acp2/custom" update, an agent_message with _meta, a
//                "_acp2/hello" extension notification
//   kinds        one update of each remaining kind (thought, plan, usage, commands,
//                notice, compaction)
//   fail         ends idle with stopReason "error" and an error object
//   anything else is echoed back whole.
//
// The first prompt of a session also sets its title (session_info_update). Prompt blocks
// other than text and resource_link (not advertised) are rejected with -32602.
// Extension request "_acp2/echo" answers with its params.

import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { loadSdk, log } from "./sdk.mjs";

const NAME = "ts-agent";
const { values: opts } = parseArgs({
  options: { sdk: { type: "string" } },
  strict: true,
});
const acp = await loadSdk(opts.sdk);
const { RequestError } = acp;

// ---------------------------------------------------------------- deterministic ids

let counter = 0;
const nextId = (prefix) => `${prefix}_${++counter}`;
let clock = Date.UTC(2026, 0, 1);
const nextTime = () => new Date((clock += 1000)).toISOString();

// ---------------------------------------------------------------- sessions

class Session {
  constructor(sessionId, cwd, additionalDirectories) {
    this.sessionId = sessionId;
    this.cwd = cwd;
    this.additionalDirectories = additionalDirectories ?? [];
    this.title = null;
    this.updatedAt = nextTime();
    this.history = []; // every update except state_update, in order, for replay
    this.turn = null; // the running turn, if any
    this.held = []; // prompts waiting for the running turn to end
    this.prompts = 0;
  }

  info() {
    const info = { sessionId: this.sessionId, cwd: this.cwd, updatedAt: this.updatedAt };
    if (this.additionalDirectories.length > 0) {
      info.additionalDirectories = this.additionalDirectories;
    }
    if (this.title !== null) {
      info.title = this.title;
    }
    return info;
  }
}

const sessions = new Map();

function getSession(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) {
    throw RequestError.sessionNotFound(sessionId);
  }
  return session;
}

async function send(client, session, update) {
  if (update.sessionUpdate !== "state_update") {
    session.history.push(update);
  }
  await client.notify("session/update", { sessionId: session.sessionId, update });
}

function abortError() {
  const error = new Error("cancelled");
  error.name = "AbortError";
  return error;
}

function checkpoint(signal) {
  if (signal.aborted) {
    throw abortError();
  }
}

function untilAborted(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) {
      reject(abortError());
    }
    signal.addEventListener("abort", () => reject(abortError()), { once: true });
  });
}

const text = (value) => ({ type: "text", text: value });

// ---------------------------------------------------------------- scenarios

async function agentSays(client, session, value, extra = {}) {
  await send(client, session, {
    sessionUpdate: "agent_message_chunk",
    messageId: nextId("msg_agent"),
    content: text(value),
    ...extra,
  });
}

async function scenarioEcho(client, session, rest) {
  await agentSays(client, session, rest);
  return { stopReason: "end_turn" };
}

async function scenarioStream(client, session, rest, signal) {
  const count = Number.parseInt(rest, 10) || 0;
  const messageId = nextId("msg_agent");
  for (let i = 0; i < count; i++) {
    checkpoint(signal);
    await send(client, session, {
      sessionUpdate: "agent_message_chunk",
      messageId,
      content: text(`${i},`),
    });
  }
  return { stopReason: "end_turn" };
}

function approved(outcome, options) {
  if (outcome?.outcome !== "selected") {
    return false;
  }
  const option = options.find((o) => o.optionId === outcome.optionId);
  return option !== undefined && option.kind.startsWith("allow");
}

async function askPermission(client, session, toolCall, signal) {
  const options = [
    { optionId: "allow", name: "Allow once", kind: "allow_once" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
  ];
  const pending = client.request(
    "session/request_permission",
    {
      sessionId: session.sessionId,
      title: `Allow ${toolCall.title}?`,
      subject: { type: "tool_call", toolCall },
      options,
    },
    { cancellationSignal: signal, stopWaitingOnCancel: true },
  );
  // Sent after the request, while the answer is outstanding.
  await send(client, session, { sessionUpdate: "state_update", state: "requires_action" });
  try {
    const response = await pending;
    return { outcome: response.outcome, allowed: approved(response.outcome, options) };
  } catch (error) {
    if (signal.aborted) {
      throw abortError();
    }
    throw error;
  }
}

async function runTool(client, session, toolCallId) {
  const path = join(session.cwd, "hello.txt");
  const terminalId = nextId("term");
  const update = (fields) => send(client, session, { sessionUpdate: "tool_call_update", toolCallId, ...fields });
  const chunk = (content) => send(client, session, { sessionUpdate: "tool_call_content_chunk", toolCallId, content });
  await update({ status: "in_progress" });
  await chunk({
    type: "diff",
    changes: [{ operation: "modify", path }],
    patch: {
      format: "git_patch",
      text:
        "diff --git a/hello.txt b/hello.txt\n--- a/hello.txt\n+++ b/hello.txt\n" +
        "@@ -1 +1 @@\n-hello\n+hello, world\n",
    },
  });
  await chunk({ type: "terminal", terminalId });
  await send(client, session, { sessionUpdate: "terminal_update", terminalId, command: "cat hello.txt", cwd: session.cwd });
  await send(client, session, {
    sessionUpdate: "terminal_output_chunk",
    terminalId,
    data: Buffer.from("hello, world\n").toString("base64"),
  });
  await send(client, session, { sessionUpdate: "terminal_update", terminalId, exitStatus: { exitCode: 0 } });
  await update({ status: "completed", rawOutput: { exitCode: 0 } });
}

async function scenarioTools(client, session, _rest, signal) {
  const toolCallId = nextId("call");
  const toolCall = { toolCallId, title: "Edit hello.txt", kind: "edit", status: "pending" };
  await send(client, session, { sessionUpdate: "tool_call_update", ...toolCall, name: "edit_file" });
  let answer;
  try {
    answer = await askPermission(client, session, toolCall, signal);
  } catch (error) {
    if (signal.aborted) {
      await send(client, session, { sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
    }
    throw error;
  }
  if (answer.outcome?.outcome === "cancelled") {
    // The user dismissed the request, or the client answered it because of a
    // session/cancel: the SDK resolves a response before it runs the handler of a
    // notification that arrived earlier, so both orders must end the same way.
    await send(client, session, { sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
    return { stopReason: "cancelled" };
  }
  await send(client, session, { sessionUpdate: "state_update", state: "running" });
  if (answer.allowed) {
    await runTool(client, session, toolCallId);
    await agentSays(client, session, "edited hello.txt");
  } else {
    await send(client, session, {
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "failed",
      content: [{ type: "content", content: text("permission rejected") }],
    });
  }
  return { stopReason: "end_turn" };
}

async function scenarioWait(client, session, _rest, signal) {
  await agentSays(client, session, "waiting");
  await untilAborted(signal);
  return { stopReason: "end_turn" }; // not reached
}

async function scenarioExt(client, session) {
  await send(client, session, { sessionUpdate: "_acp2/custom", payload: { answer: 42 } });
  await send(client, session, {
    sessionUpdate: "agent_message",
    messageId: nextId("msg_agent"),
    content: [text("ext")],
    _meta: { "acp2/test": { tag: "meta-on-update" } },
  });
  await client.notify("_acp2/hello", { sessionId: session.sessionId, from: NAME });
  return { stopReason: "end_turn" };
}

async function scenarioKinds(client, session) {
  const say = (update) => send(client, session, update);
  await say({ sessionUpdate: "agent_thought_chunk", messageId: nextId("msg_thought"), content: text("thinking") });
  await say({
    sessionUpdate: "plan_update",
    plan: {
      type: "items",
      planId: "plan_1",
      entries: [
        { content: "look", priority: "high", status: "completed" },
        { content: "answer", priority: "medium", status: "in_progress" },
      ],
    },
  });
  await say({ sessionUpdate: "usage_update", used: 1200, size: 200000, cost: { amount: 0.01, currency: "USD" } });
  await say({
    sessionUpdate: "available_commands_update",
    availableCommands: [{ type: "command", name: "help", description: "Show help" }],
  });
  await say({ sessionUpdate: "notice", severity: "info", title: "A notice" });
  const compactionId = nextId("compaction");
  await say({ sessionUpdate: "compaction_update", compactionId, status: "in_progress" });
  await say({ sessionUpdate: "compaction_summary_chunk", compactionId, content: text("summary") });
  await say({ sessionUpdate: "compaction_update", compactionId, status: "completed" });
  return { stopReason: "end_turn" };
}

async function scenarioFail(client, session) {
  await agentSays(client, session, "failing on purpose");
  return { stopReason: "error", error: { code: -32603, message: "scenario 'fail' failed" } };
}

const SCENARIOS = {
  echo: scenarioEcho,
  stream: scenarioStream,
  tools: scenarioTools,
  wait: scenarioWait,
  ext: scenarioExt,
  kinds: scenarioKinds,
  fail: scenarioFail,
};

const PROMPT_BLOCKS = new Set(["text", "resource_link"]);

function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(" ")
    .trim();
}

// ---------------------------------------------------------------- turns

async function runTurn(client, session, turn) {
  const { signal } = turn.abort;
  let stop;
  try {
    await send(client, session, { sessionUpdate: "user_message", messageId: turn.messageId, content: turn.prompt });
    if (session.prompts === 1) {
      session.title = turn.text.slice(0, 40) || "untitled";
      session.updatedAt = nextTime();
      await send(client, session, { sessionUpdate: "session_info_update", title: session.title, updatedAt: session.updatedAt });
    }
    await send(client, session, { sessionUpdate: "state_update", state: "running" });
    const word = turn.text.split(/\s+/, 1)[0];
    const rest = turn.text.slice(word.length).trim();
    const scenario = SCENARIOS[word];
    stop = scenario ? await scenario(client, session, rest, signal) : await scenarioEcho(client, session, turn.text);
  } catch (error) {
    stop = signal.aborted
      ? { stopReason: "cancelled" }
      : { stopReason: "error", error: { code: -32603, message: String(error?.message ?? error) } };
    if (!signal.aborted) {
      log(NAME, "turn failed:", error?.stack ?? error);
    }
  }
  session.turn = null;
  await send(client, session, { sessionUpdate: "state_update", state: "idle", ...stop }).catch(() => {});
  turn.done();
  session.held.shift()?.resolve();
}

function startTurn(client, session, prompt) {
  let done;
  const turn = {
    messageId: nextId("msg_user"),
    prompt,
    text: promptText(prompt),
    abort: new AbortController(),
    finished: new Promise((resolve) => (done = resolve)),
    done: () => done(),
  };
  session.turn = turn;
  session.prompts += 1;
  // Starts after the {messageId} response has been queued for writing.
  setImmediate(() => void runTurn(client, session, turn));
  return turn;
}

function withdrawHeld(session) {
  for (const held of session.held.splice(0)) {
    held.reject(RequestError.requestCancelled(undefined, "prompt withdrawn by session/cancel"));
  }
}

async function stopTurn(session) {
  withdrawHeld(session);
  const turn = session.turn;
  if (turn) {
    turn.abort.abort();
    await turn.finished;
  }
}

// ---------------------------------------------------------------- handlers

const app = acp
  .agent({ name: NAME })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "acp2-interop-ts-agent", version: "2.4.0" },
    capabilities: { session: { prompt: {} } },
    _meta: { "acp2/test": { extMethods: ["_acp2/echo"] } },
  }))
  .onRequest("session/new", ({ params }) => {
    const session = new Session(nextId("sess"), params.cwd, params.additionalDirectories);
    sessions.set(session.sessionId, session);
    return { sessionId: session.sessionId };
  })
  .onRequest("session/list", ({ params }) => {
    const all = [...sessions.values()].filter((s) => params.cwd == null || s.cwd === params.cwd);
    return { sessions: all.map((s) => s.info()) };
  })
  .onRequest("session/resume", async ({ params, client }) => {
    const session = getSession(params.sessionId);
    if (params.cwd !== session.cwd) {
      throw RequestError.invalidParams({ cwd: params.cwd }, "cwd differs from the session's cwd");
    }
    const replayFrom = params.replayFrom ?? null;
    if (replayFrom !== null && replayFrom.type !== "start") {
      throw RequestError.invalidParams({ replayFrom }, "unknown replayFrom");
    }
    if (replayFrom !== null) {
      for (const update of session.history) {
        await client.notify("session/update", { sessionId: session.sessionId, update });
      }
    }
    // A state snapshot after replay and before the response.
    const state = session.turn ? "running" : "idle";
    await client.notify("session/update", { sessionId: session.sessionId, update: { sessionUpdate: "state_update", state } });
    return {};
  })
  .onRequest("session/close", async ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (session) {
      await stopTurn(session);
    }
    return {};
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const session = getSession(params.sessionId);
    if (params.prompt.length === 0) {
      throw RequestError.invalidParams(undefined, "empty prompt");
    }
    // Only text and resource_link are advertised (session.prompt is {}): Nov D-10.
    const unsupported = params.prompt.find((block) => !PROMPT_BLOCKS.has(block.type));
    if (unsupported) {
      throw RequestError.invalidParams({ type: unsupported.type }, "unsupported prompt block type");
    }
    if (session.turn) {
      // Held until the running turn ends; session/cancel withdraws it.
      await new Promise((resolve, reject) => session.held.push({ resolve, reject }));
    }
    const turn = startTurn(client, session, params.prompt);
    return { messageId: turn.messageId };
  })
  .onNotification("session/cancel", async ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (session) {
      await stopTurn(session);
    }
  })
  .onRequest(
    "_acp2/echo",
    (value) => value,
    ({ params }) => ({ echoed: params ?? null }),
  );

// server.mjs imports `app` to serve it over HTTP; run directly, the agent is on stdio.
export { app };
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  connection.closed.then(() => process.exit(0));
}
