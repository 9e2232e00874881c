// Helpers shared by the TypeScript bench peers (see bench/_common.py for the contract).

/** CPU seconds, peak RSS and current RSS (KiB) of this process, after a GC if asked. */
export function selfStats(collect) {
  if (collect && globalThis.gc) globalThis.gc();
  const cpu = process.cpuUsage();
  return {
    cpu_s: (cpu.user + cpu.system) / 1e6,
    maxrss_kib: process.resourceUsage().maxRSS,
    rss_kib: Math.round(process.memoryUsage().rss / 1024),
  };
}

/** N from a "stream N" prompt text; anything else means 0 chunks. */
export function parseStreamPrompt(text) {
  const match = /^stream (\d+)$/.exec((text ?? "").trim());
  return match ? Number(match[1]) : 0;
}

/** The text of streamed chunk i (the same as chunk_text in bench/_common.py). */
export function chunkText(i) {
  return `tok${i} `;
}
