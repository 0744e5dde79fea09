/**
 * LISTEN/NOTIFY wake-ups (docs/architecture.md#cadence): a listener holds one dedicated connection from the pool for as long as
 * it listens, and destroys it when closed (so no LISTEN state or listener leaks back into the pool).
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
  client.on("notification", (message) => {
    if (message.channel === channel) onNotify(message.payload ?? "");
  });
  client.on("error", (error) => {
    options.onError?.(error);
  });
  try {
    await client.query(`LISTEN ${identifier}`);
  } catch (error) {
    client.release(true);
    throw error;
  }
  return {
    close: () => {
      if (!closed) {
        closed = true;
        client.release(true);
      }
      return Promise.resolve();
    },
  };
}

/** Sends a notification now (outside any transaction). */
export async function notify(db: PostgresQueryable, channel: string, payload = ""): Promise<void> {
  channelIdentifier(channel);
  await db.query("SELECT pg_notify($1::text, $2::text)", [channel, payload]);
}
