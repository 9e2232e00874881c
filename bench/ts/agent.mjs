// Bench agent on the official TypeScript SDK 2.4.0, ACP v2 entry point, served on stdio
// (or over HTTP and WebSocket with the SDK's experimental server: `--http PORT`, below).
//
// It implements the bench peer contract of bench/_common.py: a "stream N" prompt is
// accepted at once, then the turn reports the user message, running, N
// agent_message_chunk updates and idle end_turn, each sent with `await
// client.notify(...)` as the SDK's examples do; `_bench/ping`, `_bench/stats`,
// `_bench/seed`; and `session/resume` with `replayFrom: {type: "start"}` replays the
// stored conversation, sends a state snapshot, then answers.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { chunkText, parseStreamPrompt, selfStats } from "./common.mjs";

const sessions = new Map();
let nextId = 1;

function update(sessionId, body) {
  return { sessionId, update: body };
}

async function runTurn(client, sessionId, userMessageId, prompt) {
  const n = parseStreamPrompt(prompt[0]?.text);
  const messageId = `msg_agent_${nextId++}`;
  const send = (body) => client.notify("session/update", update(sessionId, body));
  await send({ sessionUpdate: "user_message", messageId: userMessageId, content: prompt });
  await send({ sessionUpdate: "state_update", state: "running" });
  for (let i = 0; i < n; i++) {
    await send({
      sessionUpdate: "agent_message_chunk",
      messageId,
      content: { type: "text", text: chunkText(i) },
    });
  }
  await send({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

function seedHistory(count) {
  const history = [];
  for (let i = 0; i < count; i++) {
    history.push({
      sessionUpdate: i % 2 === 0 ? "user_message" : "agent_message",
      messageId: `msg_${i}`,
      content: [{ type: "text", text: `stored message ${i}` }],
    });
  }
  return history;
}

const anyParams = (params) => params ?? {};

const app = acp
  .agent({ name: "acp2-bench-ts-agent" })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "acp2-bench-ts-agent", version: "0" },
    capabilities: {},
  }))
  .onRequest("session/new", () => {
    const sessionId = `sess_${nextId++}`;
    sessions.set(sessionId, []);
    return { sessionId };
  })
  .onRequest("session/prompt", ({ params, client }) => {
    const userMessageId = `msg_user_${nextId++}`;
    runTurn(client, params.sessionId, userMessageId, params.prompt).catch((error) => {
      process.stderr.write(`bench agent turn failed: ${error}\n`);
    });
    return { messageId: userMessageId };
  })
  .onRequest("session/resume", async ({ params, client }) => {
    const { sessionId } = params;
    if (params.replayFrom) {
      for (const body of sessions.get(sessionId) ?? []) {
        await client.notify("session/update", update(sessionId, body));
      }
    }
    await client.notify("session/update", update(sessionId, { sessionUpdate: "state_update", state: "idle" }));
    return {};
  })
  .onNotification("session/cancel", () => {})
  .onRequest("_bench/ping", anyParams, () => ({}))
  .onRequest("_bench/stats", anyParams, ({ params }) => selfStats(Boolean(params.gc)))
  .onRequest("_bench/seed", anyParams, ({ params }) => {
    sessions.set(params.sessionId, seedHistory(Number(params.count)));
    return {};
  });

// `--http PORT`: serve the same agent with the SDK's experimental server (AcpServer and its
// Node adapter) on 127.0.0.1:PORT/acp instead of stdio: Streamable HTTP, and WebSocket
// upgrades through the `ws` package as the SDK's Node adapter expects
// (bench/ts_remote.py, bench/remote_stream.py --server).
const httpAt = process.argv.indexOf("--http");
if (httpAt >= 0) {
  const { createServer } = await import("node:http");
  const { WebSocketServer } = await import("ws");
  const { AcpServer } = await import("@agentclientprotocol/sdk/experimental/server");
  const node = await import("@agentclientprotocol/sdk/experimental/node");
  const acpServer = new AcpServer({ agent: app });
  const server = createServer(node.createNodeHttpHandler(acpServer));
  server.on("upgrade", node.createNodeWebSocketUpgradeHandler(acpServer, new WebSocketServer({ noServer: true })));
  server.listen(Number(process.argv[httpAt + 1]), "127.0.0.1", () => {
    process.stderr.write(`listening on http://127.0.0.1:${server.address().port}/acp\n`);
  });
  const stop = () => acpServer.close().finally(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
} else {
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  await connection.closed;
  process.exit(0);
}
