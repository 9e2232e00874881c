// acp2 interop test agent: an ACP v1 agent on stdio, built on the official TypeScript
// SDK's stable entrypoint (the package's main entry, dist/v1/stable). A deterministic
// peer for acp2's tests, written from the SDK's documented API.
//
//   node v1_agent.mjs [--sdk DIR]
//
// v1's shape: session/prompt is held open until the turn ends and answered with its
// stopReason; no user message echo, no state updates; a tool call is created with
// `tool_call` and patched with `tool_call_update`. The scenario is the first word of
// the prompt text (the words of py/v1_agent.py, plus `read`):
//
//   echo <text>  one agent_message_chunk         stream <n>  n chunks "0," "1," ...
//   tools        a thought, a plan, tool_call (pending), session/request_permission
//                (allow_once / reject_once); allowed: in_progress, a diff, completed
//                and the plan completed; rejected: failed; outcome cancelled or
//                session/cancel: failed (v1's tool statuses have no "cancelled") and
//                the prompt ends "cancelled"
//   read <name>  a `read` tool call that reads <cwd>/<name> with fs/read_text_file when
//                the client offered fs.readTextFile, and says the text (or the error
//                code); without the capability it says "no fs" and makes no call
//   write <name> an `edit` tool call that writes "written by ts-v1-agent\n" to <cwd>/<name>
//                with fs/write_text_file when the client offered fs.writeTextFile,
//                then says "wrote <name>" (or the error code); else "no fs"
//   wait         says "waiting", runs until session/cancel
//   kinds        a thought, a plan, available commands
//   fail         says "failing on purpose", then answers the prompt with -32603
//   anything else is echoed back whole.
//
// session/load replays the session's history (the prompts as user_message_chunk and
// every update sent) before its response.

import { once } from "node:events";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { loadStableSdk, log } from "./sdk.mjs";

const NAME = "ts-v1-agent";
const { values: opts } = parseArgs({ options: { sdk: { type: "string" } }, strict: true });
const acp = await loadStableSdk(opts.sdk);
const { RequestError } = acp;

const OPTIONS = [
  { optionId: "allow", name: "Allow once", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

let counter = 0;
const nextId = (prefix) => `${prefix}_${++counter}`;
const text = (value) => ({ type: "text", text: value });
const sessions = new Map();
let clientCapabilities = {}; // from initialize: this process serves one connection

function getSession(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) {
    throw RequestError.sessionNotFound(sessionId);
  }
  return session;
}

// Sends one update of a turn and keeps it for session/load.
async function send(client, session, update) {
  session.history.push(update);
  await client.notify("session/update", { sessionId: session.sessionId, update });
}

// Resolves once session/cancel aborted the turn (at once if it already has).
const cancelled = (signal) => (signal.aborted ? Promise.resolve() : once(signal, "abort"));

// ---------------------------------------------------------------- scenarios

const say = (cx, value) => send(cx.client, cx.session, { sessionUpdate: "agent_message_chunk", content: text(value) });
const patch = (cx, toolCallId, fields) =>
  send(cx.client, cx.session, { sessionUpdate: "tool_call_update", toolCallId, ...fields });

function plan(statuses) {
  const [look, answer] = statuses;
  return {
    sessionUpdate: "plan",
    entries: [
      { content: "look", priority: "high", status: look },
      { content: "answer", priority: "medium", status: answer },
    ],
  };
}

async function scenarioStream(cx, rest) {
  const count = Number.parseInt(rest, 10) || 0;
  for (let i = 0; i < count; i++) {
    cx.signal.throwIfAborted();
    await say(cx, `${i},`);
  }
  return "end_turn";
}

// The client's outcome, or null once session/cancel aborted the turn (v1: the client
// answers the open permission "cancelled"; the turn need not wait for that answer).
async function askPermission(cx, toolCall) {
  const pending = cx.client.request("session/request_permission", {
    sessionId: cx.session.sessionId,
    toolCall,
    options: OPTIONS,
  });
  pending.catch(() => {}); // a late answer (or a closed connection) after the abort
  return Promise.race([pending.then((response) => response.outcome), cancelled(cx.signal).then(() => null)]);
}

async function runTool(cx, toolCallId) {
  await patch(cx, toolCallId, { status: "in_progress" });
  const path = join(cx.session.cwd, "hello.txt");
  await patch(cx, toolCallId, { content: [{ type: "diff", path, oldText: "hello\n", newText: "hello, world\n" }] });
  await patch(cx, toolCallId, { status: "completed", rawOutput: { exitCode: 0 } });
  await send(cx.client, cx.session, plan(["completed", "completed"]));
  await say(cx, "edited hello.txt");
}

async function scenarioTools(cx) {
  await send(cx.client, cx.session, { sessionUpdate: "agent_thought_chunk", content: text("planning an edit") });
  await send(cx.client, cx.session, plan(["in_progress", "pending"]));
  const toolCall = { toolCallId: nextId("call"), title: "Edit hello.txt", kind: "edit", status: "pending" };
  await send(cx.client, cx.session, { sessionUpdate: "tool_call", ...toolCall });
  const outcome = await askPermission(cx, toolCall);
  const chosen = outcome?.outcome === "selected" ? OPTIONS.find((o) => o.optionId === outcome.optionId) : null;
  if (!chosen) {
    await patch(cx, toolCall.toolCallId, { status: "failed" });
    return "cancelled";
  }
  if (chosen.kind === "allow_once") {
    await runTool(cx, toolCall.toolCallId);
  } else {
    const rejected = [{ type: "content", content: text("permission rejected") }];
    await patch(cx, toolCall.toolCallId, { status: "failed", content: rejected });
  }
  return "end_turn";
}

// The client's answer to an fs/* request: {result} or {code} (its error code).
async function askClient(cx, method, params) {
  try {
    return { result: await cx.client.request(method, { sessionId: cx.session.sessionId, ...params }) };
  } catch (error) {
    return { code: error?.code ?? null };
  }
}

// Runs an fs tool call on <cwd>/<name>: `tool_call` in progress, then `act(path)`
// ({result} or {code}), then completed (with `done(result)` as content) or failed.
async function fsTool(cx, { name, kind, title }, act, done) {
  const path = join(cx.session.cwd, name);
  const toolCallId = nextId("call");
  const call = { sessionUpdate: "tool_call", toolCallId, title, kind, status: "in_progress" };
  await send(cx.client, cx.session, { ...call, locations: [{ path }] });
  const answer = await act(path);
  if (answer.code !== undefined) {
    await patch(cx, toolCallId, { status: "failed", rawOutput: { code: answer.code } });
    return answer;
  }
  await patch(cx, toolCallId, { status: "completed", content: [{ type: "content", content: text(done(answer.result)) }] });
  return answer;
}

async function scenarioRead(cx, rest) {
  if (!clientCapabilities.fs?.readTextFile) {
    await say(cx, "no fs");
    return "end_turn";
  }
  const name = rest || "hello.txt";
  const read = (path) => askClient(cx, "fs/read_text_file", { path });
  const answer = await fsTool(cx, { name, kind: "read", title: `Read ${name}` }, read, (r) => r.content);
  await say(cx, answer.code === undefined ? answer.result.content : `could not read ${name}: ${answer.code}`);
  return "end_turn";
}

async function scenarioWrite(cx, rest) {
  if (!clientCapabilities.fs?.writeTextFile) {
    await say(cx, "no fs");
    return "end_turn";
  }
  const name = rest || "hello.txt";
  const write = (path) => askClient(cx, "fs/write_text_file", { path, content: `written by ${NAME}\n` });
  const answer = await fsTool(cx, { name, kind: "edit", title: `Write ${name}` }, write, () => `wrote ${name}`);
  await say(cx, answer.code === undefined ? `wrote ${name}` : `could not write ${name}: ${answer.code}`);
  return "end_turn";
}

async function scenarioKinds(cx) {
  await send(cx.client, cx.session, { sessionUpdate: "agent_thought_chunk", content: text("thinking") });
  await send(cx.client, cx.session, plan(["completed", "in_progress"]));
  const availableCommands = [{ name: "help", description: "Show help" }];
  await send(cx.client, cx.session, { sessionUpdate: "available_commands_update", availableCommands });
  return "end_turn";
}

const SCENARIOS = {
  async echo(cx, rest) {
    await say(cx, rest);
    return "end_turn";
  },
  stream: scenarioStream,
  tools: scenarioTools,
  read: scenarioRead,
  write: scenarioWrite,
  async wait(cx) {
    await say(cx, "waiting");
    await cancelled(cx.signal);
    return "cancelled";
  },
  kinds: scenarioKinds,
  async fail(cx) {
    await say(cx, "failing on purpose");
    throw RequestError.internalError({ details: "scenario 'fail' failed" });
  },
};

// ---------------------------------------------------------------- turns

function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(" ")
    .trim();
}

// Runs one prompt to its stop reason; session/cancel aborts `signal`.
async function runTurn(client, session, prompt, signal) {
  for (const content of prompt) {
    session.history.push({ sessionUpdate: "user_message_chunk", content });
  }
  const words = promptText(prompt);
  const word = words.split(/\s+/, 1)[0];
  const scenario = SCENARIOS[word];
  const cx = { client, session, signal };
  try {
    return scenario ? await scenario(cx, words.slice(word.length).trim()) : await SCENARIOS.echo(cx, words);
  } catch (error) {
    if (signal.aborted) {
      return "cancelled";
    }
    throw error;
  }
}

const app = acp
  .agent({ name: NAME })
  .onRequest("initialize", ({ params }) => {
    clientCapabilities = params.clientCapabilities ?? {};
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "acp2-interop-ts-v1-agent", version: "2.4.0" },
      agentCapabilities: { loadSession: true },
      authMethods: [],
    };
  })
  .onRequest("session/new", ({ params }) => {
    const session = { sessionId: nextId("sess"), cwd: params.cwd, history: [], turn: null };
    sessions.set(session.sessionId, session);
    return { sessionId: session.sessionId };
  })
  .onRequest("session/load", async ({ params, client }) => {
    const session = getSession(params.sessionId);
    for (const update of session.history) {
      await client.notify("session/update", { sessionId: session.sessionId, update });
    }
    return {};
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const session = getSession(params.sessionId);
    if (session.turn) {
      throw RequestError.invalidRequest(undefined, "a prompt is already running");
    }
    session.turn = new AbortController();
    try {
      return { stopReason: await runTurn(client, session, params.prompt, session.turn.signal) };
    } finally {
      session.turn = null;
    }
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.turn?.abort();
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
connection.closed.then(() => {
  log(NAME, "connection closed");
  process.exit(0);
});
