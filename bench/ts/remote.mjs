// Remote bench driver on the official TypeScript SDK 2.4.0: its experimental ws-client
// (`createWebSocketStream`, on the `ws` package's WebSocket as the SDK documents for Node)
// or http-client (`createHttpStream`: POST + SSE) drives a remote agent, e.g. agent.mjs
// served by the SDK's experimental server (`node agent.mjs --http 0`).
//
//   node remote.mjs stream --url URL --transport ws|http [--updates N]
//   node remote.mjs idle --url URL --transport ws|http [--connections N]
//
// stream: one session, a warm-up `stream 10`, then one `stream N` prompt; the time from
// the prompt until its idle state_update, every update reduced into the session state
// (the State of common.mjs, as the stdio driver does). The agent's `_bench/stats` before
// and after the window gives the server process's CPU (agent.mjs runs inside it).
// Then `--prompts K` prompts `stream 0` (prompt -> idle), p50 in ms.
// idle: opens idle connections (initialized, one session each) in two steps driven by
// stdin, see idle() (bench/ts_remote.py measures the server's RSS in between).
// Prints one "BENCH-RESULT {json}" line (stream) like the other drivers.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { State, now, selfStats } from "./common.mjs";

const CWD = "/tmp";
const OPTIONS = { url: "", transport: "ws", updates: 100000, prompts: 20, connections: 50 };

function parseArgs(argv) {
  const [scenario, ...rest] = argv;
  const options = { ...OPTIONS };
  for (let i = 0; i < rest.length; i += 2) {
    const key = rest[i].replace(/^--/, "");
    if (!(key in options)) throw new Error(`unknown option ${rest[i]}`);
    options[key] = typeof OPTIONS[key] === "number" ? Number(rest[i + 1]) : rest[i + 1];
  }
  return { scenario, options };
}

function openStream({ url, transport }) {
  if (transport === "ws") return createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket });
  if (transport === "http") return createHttpStream(url);
  throw new Error(`unknown transport ${transport}; ws or http`);
}

/** Connect one client app to the remote agent and run `body(agent, state)` on it. */
function connected(options, body) {
  const state = new State();
  const app = acp.client({ name: "acp2-bench-ts-remote" }).onNotification("session/update", ({ params }) => {
    state.reduce(params);
  });
  return app.connectWith(openStream(options), async (agent) => {
    await agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acp2-bench-ts-remote", version: "0" },
      capabilities: {},
    });
    const sessionId = (await agent.request("session/new", { cwd: CWD })).sessionId;
    return body(agent, state, sessionId);
  });
}

async function promptUntilIdle(agent, state, sessionId, n) {
  const idle = state.nextIdle(sessionId);
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `stream ${n}` }] });
  await idle;
}

async function stream(options) {
  return connected(options, async (agent, state, sessionId) => {
    await promptUntilIdle(agent, state, sessionId, 10);
    const server0 = await agent.request("_bench/stats", {});
    const cpu0 = selfStats(false).cpu_s;
    const t0 = now();
    await promptUntilIdle(agent, state, sessionId, options.updates);
    const seconds = now() - t0;
    const own = selfStats(false);
    const server1 = await agent.request("_bench/stats", {});
    const samples = [];
    for (let i = 0; i < options.prompts; i++) {
      const p0 = now();
      await promptUntilIdle(agent, state, sessionId, 0);
      samples.push(now() - p0);
    }
    samples.sort((a, b) => a - b);
    const n = options.updates;
    const parts = [...state.session(sessionId).messages.values()];
    const streamed = parts.reduce((total, p) => total + p.length, 0);
    if (streamed < n) throw new Error(`reduced ${streamed} chunks, expected at least ${n}`);
    return {
      updates: n,
      seconds,
      updates_per_s: n / seconds,
      client_cpu_us_per_update: ((own.cpu_s - cpu0) * 1e6) / n,
      server_cpu_us_per_update: ((server1.cpu_s - server0.cpu_s) * 1e6) / n,
      client_maxrss_mib: own.maxrss_kib / 1024,
      prompt_p50_ms: samples.length ? samples[Math.floor(samples.length / 2)] * 1e3 : null,
    };
  });
}

/** Resolves on each line of stdin (a step of the idle protocol) and at its end. */
function stdinSteps() {
  const waiters = [];
  let buffered = "";
  let ended = false;
  const wake = () => waiters.shift()?.();
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    buffered += chunk;
    while (buffered.includes("\n")) {
      buffered = buffered.slice(buffered.indexOf("\n") + 1);
      wake();
    }
  });
  process.stdin.on("end", () => {
    ended = true;
    while (waiters.length) wake();
  });
  return () => new Promise((resolve) => (ended ? resolve() : waiters.push(resolve)));
}

/** Open `count` idle connections (initialized, one session each); resolve once all are. */
function openIdle(options, count, done) {
  return new Promise((resolve) => {
    let ready = 0;
    for (let i = 0; i < count; i++) {
      connected(options, async () => {
        if (++ready === count) resolve();
        await done;
      }).catch((error) => {
        process.stderr.write(`idle connection failed: ${error}\n`);
        process.exit(1);
      });
    }
  });
}

// The idle protocol: one connection opens, "READY" (the caller measures the server); a
// line on stdin opens `--connections` more, "READY" again; the end of stdin closes them.
async function idle(options) {
  const step = stdinSteps();
  let release;
  const done = new Promise((resolve) => (release = resolve));
  await openIdle(options, 1, done);
  process.stdout.write("READY\n");
  await step();
  await openIdle(options, options.connections, done);
  process.stdout.write("READY\n");
  await step();
  release();
  return null;
}

async function main() {
  const { scenario, options } = parseArgs(process.argv.slice(2));
  const run = { stream, idle }[scenario];
  if (!run) throw new Error(`unknown scenario ${scenario}; stream or idle`);
  const result = await run(options);
  if (result) process.stdout.write(`BENCH-RESULT ${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
