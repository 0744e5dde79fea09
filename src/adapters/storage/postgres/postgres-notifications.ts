/**
 * LISTEN/NOTIFY wake-ups (docs/architecture.md#cadence): a listener holds one dedicated connection from the pool for as long as
 * it listens, and destroys it when closed (so no LISTEN state or listener leaks back into the pool).
 * A listening connection only receives, so a network that silently drops its packets would leave it
 * waiting forever: it is asked a trivial query now and then, and one that does not answer in time is
 * destroyed and reported dead (docs/operations.md#database-timeouts).
 */
import type { PostgresPool, PostgresQueryable } from "./postgres-pool.js";

/** Channel names are constants in code; still, only plain identifiers reach the SQL text. */
const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export interface PostgresListener {
  /** Stops listening and closes the dedicated connection. Idempotent. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /** The connection failed: the listener is dead; the coordinator falls back to polling or listens again. */
  readonly onError?: (error: Error) => void;
  /** Ask the connection a trivial query this often (ms); 0 or absent: never. */
  readonly checkEveryMs?: number;
  /** A check not answered within this (ms) reports the connection dead. @default 10000 */
  readonly checkTimeoutMs?: number;
}

function channelIdentifier(channel: string): string {
  if (!CHANNEL_PATTERN.test(channel)) {
    throw new RangeError(`invalid notification channel ${JSON.stringify(channel)}`);
  }
  return `"${channel}"`;
}

export async function listen(
  pool: PostgresPool,
  channel: string,
  onNotify: (payload: string) => void,
  options: ListenOptions = {},
): Promise<PostgresListener> {
  const identifier = channelIdentifier(channel);
  const client = await pool.connect();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const end = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    client.release(true);
  };
  const dead = (error: Error): void => {
    if (closed) return;
    end();
    options.onError?.(error);
  };
  client.on("notification", (message) => {
    if (message.channel === channel) onNotify(message.payload ?? "");
  });
  client.on("error", dead);
  try {
    await client.query(`LISTEN ${identifier}`);
  } catch (error) {
    end();
    throw error;
  }
  const everyMs = options.checkEveryMs ?? 0;
  if (everyMs > 0) {
    const timeoutMs = options.checkTimeoutMs ?? 10_000;
    let checking = false;
    timer = setInterval(() => {
      if (checking || closed) return;
      checking = true;
      void answersWithin(client, timeoutMs)
        .then((answered) => {
          if (!answered) {
            dead(new Error(`the LISTEN connection did not answer a check within ${timeoutMs} ms`));
          }
        }, dead)
        .finally(() => {
          checking = false;
        });
    }, everyMs);
    // The check alone never keeps a process alive.
    timer.unref();
  }
  return {
    close: () => {
      end();
      return Promise.resolve();
    },
  };
}

/** Whether `client` answers a trivial query within `timeoutMs` (rejects when it answers an error). */
async function answersWithin(client: PostgresQueryable, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, timeoutMs);
  });
  try {
    const answer = client.query("SELECT 1").then(() => true as const);
    // Once too late, its eventual failure (the connection destroyed) is no one's to hear.
    answer.catch(() => undefined);
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends a notification now (outside any transaction). */
export async function notify(db: PostgresQueryable, channel: string, payload = ""): Promise<void> {
  channelIdentifier(channel);
  await db.query("SELECT pg_notify($1::text, $2::text)", [channel, payload]);
}
