// Loads the official TypeScript SDK: its experimental ACP v2 entrypoint (`loadSdk`, for
// agent.mjs / client.mjs) or its stable ACP v1 main entrypoint (`loadStableSdk`, for
// v1_agent.mjs / v1_client.mjs).
//
// The test peers live in the source tree while their node_modules lives in a cache
// folder (see tests/interop/node_env.py). Node's ESM loader ignores NODE_PATH, so the
// peers resolve the package from the folder given with `--sdk DIR` (or the
// ACP2_TS_SDK environment variable), DIR being the folder that holds node_modules.
// Without either, normal resolution is used (a node_modules next to this file).

import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export const SDK_ENTRY = "@agentclientprotocol/sdk/experimental/v2";

export async function loadSdk(dir) {
  return loadEntry(SDK_ENTRY, dir);
}

// The package's main entry ".", which speaks ACP v1 (dist/v1/stable).
export const SDK_V1_ENTRY = "@agentclientprotocol/sdk";

export async function loadStableSdk(dir) {
  return loadEntry(SDK_V1_ENTRY, dir);
}

// The experimental remote client transports: "ws" (createWebSocketStream) or "http"
// (createHttpStream, Streamable HTTP).
export async function loadRemote(kind, dir) {
  const entry = kind === "ws" ? "ws-client" : "http-client";
  return loadEntry(`@agentclientprotocol/sdk/experimental/${entry}`, dir);
}

async function loadEntry(entry, dir) {
  const root = dir || process.env.ACP2_TS_SDK;
  if (!root) {
    return import(entry);
  }
  const require = createRequire(join(root, "package.json"));
  return import(pathToFileURL(require.resolve(entry)).href);
}

// Writes one line to stderr: stdout belongs to the protocol (agent) or the report
// (client).
export function log(name, ...parts) {
  process.stderr.write(`[${name}] ${parts.join(" ")}\n`);
}
