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

/** Monotonic seconds. */
export const now = () => Number(process.hrtime.bigint()) / 1e9;

/** Client-side session state: text per message, update count, idle waiters. */
export class State {
  constructor() {
    this.received = 0;
    this.sessions = new Map();
    this.idleWaiters = new Map();
    this.target = Infinity;
    this.reached = null;
  }

  session(sessionId) {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { messages: new Map(), state: "idle", stopReason: undefined };
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  reduce({ sessionId, update }) {
    this.received++;
    const session = this.session(sessionId);
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
      case "user_message_chunk": {
        const parts = session.messages.get(update.messageId) ?? [];
        parts.push(update.content.text ?? "");
        session.messages.set(update.messageId, parts);
        break;
      }
      case "agent_message":
      case "user_message":
        session.messages.set(update.messageId, (update.content ?? []).map((block) => block.text ?? ""));
        break;
      case "state_update":
        session.state = update.state;
        session.stopReason = update.stopReason;
        if (update.state === "idle") {
          const waiter = this.idleWaiters.get(sessionId);
          this.idleWaiters.delete(sessionId);
          waiter?.();
        }
        break;
      default:
        break;
    }
    if (this.received >= this.target && this.reached) {
      const reached = this.reached;
      this.reached = null;
      reached();
    }
  }

  /** A promise for the next idle state_update of the session. */
  nextIdle(sessionId) {
    return new Promise((resolve) => this.idleWaiters.set(sessionId, resolve));
  }

  /** A promise resolved once `total` updates have been received in all. */
  expect(total) {
    this.target = total;
    return new Promise((resolve) => {
      this.reached = resolve;
      if (this.received >= total) resolve();
    });
  }
}
