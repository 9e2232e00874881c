// Bench driver on the official TypeScript SDK 2.4.0, ACP v2 entry point.
//
// Usage: node client.mjs SCENARIO [--updates N] [--pings N] [--prompts N] [--warmup N]
//                                 [--replay N] [--sessions N] [--window N]
// It spawns agent.mjs (next to it) over stdio, drives one scenario (stream, rtt, replay,
// sessions) through a ClientApp whose session/update handler reduces every update into
// per-session state, and prints one "BENCH-RESULT {json}" line like the Python drivers.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { State, now, selfStats } from "./common.mjs";

const CWD = "/tmp";
const SIZES = { updates: 100000, pings: 2000, prompts: 1000, warmup: 50, replay: 10000, sessions: 1000, window: 64 };

function parseArgs(argv) {
  const [scenario, ...rest] = argv;
  const sizes = { ...SIZES };
  for (let i = 0; i < rest.length; i += 2) {
    const key = rest[i].replace(/^--/, "");
    if (!(key in sizes)) throw new Error(`unknown option ${rest[i]}`);
    sizes[key] = Number(rest[i + 1]);
  }
  return { scenario, sizes };
}

function latency(prefix, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (q) => sorted[Math.max(1, Math.min(sorted.length, Math.round((q / 100) * sorted.length + 0.5))) - 1];
  return { [`${prefix}_p50_us`]: rank(50) * 1e6, [`${prefix}_p99_us`]: rank(99) * 1e6, [`${prefix}_count`]: sorted.length };
}

async function timed(count, warmup, call) {
  const samples = [];
  for (let i = 0; i < warmup + count; i++) {
    const t0 = now();
    await call();
    if (i >= warmup) samples.push(now() - t0);
  }
  return samples;
}

async function limited(window, count, make) {
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await make(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
  return results;
}

async function newSession(agent) {
  return (await agent.request("session/new", { cwd: CWD })).sessionId;
}

async function promptUntilIdle(agent, state, sessionId, n) {
  const idle = state.nextIdle(sessionId);
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `stream ${n}` }] });
  await idle;
}

const scenarios = {
  async stream(agent, state, sizes) {
    const sessionId = await newSession(agent);
    await promptUntilIdle(agent, state, sessionId, 10);
    const agent0 = await agent.request("_bench/stats", {});
    const cpu0 = selfStats(false).cpu_s;
    const t0 = now();
    await promptUntilIdle(agent, state, sessionId, sizes.updates);
    const seconds = now() - t0;
    const own = selfStats(false);
    const agent1 = await agent.request("_bench/stats", {});
    const n = sizes.updates;
    const parts = state.session(sessionId).messages;
    const streamed = [...parts.values()].reduce((total, p) => total + p.length, 0);
    if (streamed < n) throw new Error(`reduced ${streamed} chunks, expected at least ${n}`);
    return {
      updates: n,
      seconds,
      updates_per_s: n / seconds,
      client_cpu_us_per_update: ((own.cpu_s - cpu0) * 1e6) / n,
      agent_cpu_us_per_update: ((agent1.cpu_s - agent0.cpu_s) * 1e6) / n,
      client_maxrss_mib: own.maxrss_kib / 1024,
      agent_maxrss_mib: agent1.maxrss_kib / 1024,
    };
  },

  async rtt(agent, state, sizes) {
    const sessionId = await newSession(agent);
    const pings = await timed(sizes.pings, sizes.warmup, () => agent.request("_bench/ping", {}));
    const prompts = await timed(sizes.prompts, sizes.warmup, () => promptUntilIdle(agent, state, sessionId, 0));
    return { ...latency("ping", pings), ...latency("prompt", prompts) };
  },

  async replay(agent, state, sizes) {
    const sessionId = await newSession(agent);
    await agent.request("_bench/seed", { sessionId, count: sizes.replay });
    const rss0 = selfStats(true).rss_kib;
    const all = state.expect(state.received + sizes.replay + 1);
    const t0 = now();
    await agent.request("session/resume", { sessionId, cwd: CWD, replayFrom: { type: "start" } });
    const seconds = now() - t0;
    await all;
    const allIn = now() - t0;
    const own = selfStats(false);
    return {
      updates: sizes.replay,
      seconds,
      seconds_all_applied: allIn,
      client_maxrss_mib: own.maxrss_kib / 1024,
      client_rss_growth_mib: (own.rss_kib - rss0) / 1024,
    };
  },

  async sessions(agent, state, sizes) {
    const agent0 = await agent.request("_bench/stats", { gc: true });
    const own0 = selfStats(true);
    const t0 = now();
    const ids = await limited(sizes.window, sizes.sessions, () => newSession(agent));
    await limited(sizes.window, ids.length, (i) => promptUntilIdle(agent, state, ids[i], 1));
    const seconds = now() - t0;
    const own1 = selfStats(true);
    const agent1 = await agent.request("_bench/stats", { gc: true });
    const n = sizes.sessions;
    return {
      sessions: n,
      seconds,
      agent_kib_per_session: (agent1.rss_kib - agent0.rss_kib) / n,
      client_kib_per_session: (own1.rss_kib - own0.rss_kib) / n,
    };
  },
};

async function main() {
  const { scenario, sizes } = parseArgs(process.argv.slice(2));
  const run = scenarios[scenario];
  if (!run) throw new Error(`unknown scenario ${scenario}; one of ${Object.keys(scenarios).join(", ")}`);
  const agentPath = fileURLToPath(new URL("./agent.mjs", import.meta.url));
  const child = spawn(process.execPath, ["--expose-gc", agentPath], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = once(child, "exit");
  const state = new State();
  const app = acp.client({ name: "acp2-bench-ts-client" }).onNotification("session/update", ({ params }) => {
    state.reduce(params);
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const result = await app.connectWith(stream, async (agent) => {
    await agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acp2-bench-ts-client", version: "0" },
      capabilities: {},
    });
    return run(agent, state, sizes);
  });
  process.stdout.write(`BENCH-RESULT ${JSON.stringify(result)}\n`);
  if (!child.stdin.destroyed) child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
