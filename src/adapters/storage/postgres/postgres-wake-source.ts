/**
 * Wake-ups from other replicas over LISTEN/NOTIFY (docs/storage.md#postgresql), behind the runtime's
 * `WakeSource` port. It keeps listening: when the connection dies (a database restart), it listens again
 * with back-off and wakes the coordinator once reconnected, for what it may have missed. The coordinator's
 * polling at the tick covers the gap.
 */
import type { WakeHint, WakeSource } from "../../../domain/ports/store.js";
import { exponentialBackoffMs } from "../../../domain/backoff.js";
import type { ListenOptions, PostgresListener } from "./postgres-notifications.js";

/** Listens on one channel (a PostgreSQL store's `listen`). */
export type ListenFn = (
  channel: string,
  onNotify: (payload: string) => void,
  options?: ListenOptions,
) => Promise<PostgresListener>;

/** The reconnect back-off: 0.5 s doubling to 30 s. */
const RECONNECT_INITIAL_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/** Sends one notification on a channel (a PostgreSQL store's `notify`, outside any transaction). */
export type NotifyFn = (channel: string, payload: string) => Promise<void>;

/** The payload of `announceQueued`: this prefix, then the sender's replica id. */
const QUEUED_PREFIX = "queued:";

export class PostgresWakeSource implements WakeSource {
  readonly #listen: ListenFn;
  readonly #channel: string;
  readonly announceQueued?: (from: string) => Promise<void>;

  /** `notify` absent (the store sends no notifications): `announceQueued` is absent too. */
  constructor(listen: ListenFn, channel: string, notify?: NotifyFn) {
    this.#listen = listen;
    this.#channel = channel;
    if (notify !== undefined) {
      this.announceQueued = (from) => notify(channel, `${QUEUED_PREFIX}${from}`);
    }
  }

  async subscribe(
    onWake: (hint?: WakeHint, from?: string) => void,
    onLost?: (error: Error) => void,
  ): Promise<() => Promise<void>> {
    let stopped = false;
    let listener: PostgresListener | null = null;
    let timer: NodeJS.Timeout | undefined;
    let failures = 0;
    const connect = async (): Promise<void> => {
      // Run writes notify `run:<id>` (a slot freed, a run queued again); task writes `task:`/`tasks:`;
      // an admission that queued more than its replica claims at once `queued:<replica id>`.
      const heard = (payload: string): void => {
        if (payload.startsWith(QUEUED_PREFIX)) {
          onWake("queued", payload.slice(QUEUED_PREFIX.length));
          return;
        }
        onWake(payload.startsWith("run:") ? "runs" : undefined);
      };
      listener = await this.#listen(this.#channel, heard, {
        onError: (error) => {
          const dead = listener;
          listener = null;
          void dead?.close();
          if (!stopped) onLost?.(error);
          retry();
        },
      });
      failures = 0;
    };
    const retry = (): void => {
      if (stopped) return;
      const delay = exponentialBackoffMs(failures++, RECONNECT_INITIAL_MS, RECONNECT_MAX_MS);
      timer = setTimeout(() => {
        connect().then(() => {
          onWake();
        }, retry);
      }, delay);
    };
    await connect();
    return async () => {
      stopped = true;
      clearTimeout(timer);
      await listener?.close();
    };
  }
}
