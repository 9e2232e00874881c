// acp2 interop test server: the test agent of agent.mjs served by the official TypeScript
// SDK's experimental/server (AcpServer + its Node adapter) on 127.0.0.1, Streamable HTTP
// on /acp; WebSocket upgrades too when the `ws` package can be imported and
// ACP2_TS_HTTP_ONLY is not set.
//
//   node server.mjs [--sdk DIR]      (port from ACP2_TS_PORT, default 0 = any free one)
//
// Prints `listening <port> <websocket|http-only>` on stdout once it accepts connections.

import http from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { app } from "./agent.mjs";
import { log } from "./sdk.mjs";

const NAME = "ts-server";
const root = process.env.ACP2_TS_SDK || process.argv[process.argv.indexOf("--sdk") + 1];
const resolve = createRequire(join(root, "package.json")).resolve;
const load = (entry) => import(pathToFileURL(resolve(entry)).href);
const { AcpServer } = await load("@agentclientprotocol/sdk/experimental/server");
const node = await load("@agentclientprotocol/sdk/experimental/node");

const server = new AcpServer({ agent: app });
const handler = node.createNodeHttpHandler(server);
const httpServer = http.createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    res.writeHead(404).end();
    return;
  }
  handler(req, res);
});

let mode = "http-only";
if (!process.env.ACP2_TS_HTTP_ONLY) try {
  const ws = await import(pathToFileURL(resolve("ws")).href);
  const WebSocketServer = ws.WebSocketServer ?? ws.default.WebSocketServer;
  const wss = new WebSocketServer({ noServer: true });
  httpServer.on("upgrade", node.createNodeWebSocketUpgradeHandler(server, wss));
  mode = "websocket";
} catch (error) {
  log(NAME, `no \`ws\` package (${error.message}): WebSocket upgrades are refused`);
}

httpServer.listen(Number(process.env.ACP2_TS_PORT || 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${httpServer.address().port} ${mode}\n`);
});
const stop = () => server.close().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
