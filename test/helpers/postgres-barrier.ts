/**
 * Races forced the way PostgreSQL's isolation tester forces them: a coordinating connection holds a
 * lock the racers need (a row lock, an advisory lock), the racers start and are seen waiting on it in
 * `pg_stat_activity`, and only then is the lock let go, so every racer is inside the contended step at
 * once instead of by luck. Waits are bounded and fail with what the server showed.
 */
import pg from "pg";

export interface Barrier {
  /** Waits until `count` other sessions of this database wait on a lock of `kind`. */
  waitForWaiters(count: number, kind: "row" | "advisory"): Promise<void>;
  /** Ends the coordinating transaction: the racers go on together. */
  release(): Promise<void>;
  close(): Promise<void>;
}

const WAIT_LIMIT_MS = 15_000;

/**
 * Opens the coordinating connection and, in an open transaction on it, runs `hold` (a statement that
 * takes the lock the racers will need, e.g. `SELECT ... FOR UPDATE` or `pg_advisory_xact_lock`).
 */
export async function holdLock(
  url: string,
  hold: string,
  values: unknown[] = [],
): Promise<Barrier> {
  const holder = new pg.Client({ connectionString: url });
  const observer = new pg.Client({ connectionString: url });
  await Promise.all([holder.connect(), observer.connect()]);
  await holder.query("BEGIN");
  await holder.query(hold, values);
  const holderPid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!
    .pid;
  let open = true;
  return {
    async waitForWaiters(count, kind) {
      // A row lock is waited for on the holder's transaction id (or the tuple); an advisory one by name.
      const events = kind === "row" ? ["transactionid", "tuple"] : ["advisory"];
      const deadline = Date.now() + WAIT_LIMIT_MS;
      let seen: unknown[] = [];
      while (Date.now() < deadline) {
        const waiting = await observer.query(
          `SELECT pid, wait_event, query FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1::int4
              AND wait_event_type = 'Lock' AND wait_event = ANY($2::text[])`,
          [holderPid, events],
        );
        seen = waiting.rows;
        if (waiting.rows.length >= count) return;
        // A polling pace, not a wait that decides anything: the loop ends on what the server shows.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(
        `${count} sessions were not seen waiting on the ${kind} lock within ${WAIT_LIMIT_MS} ms: ${JSON.stringify(seen)}`,
      );
    },
    async release() {
      if (!open) return;
      open = false;
      await holder.query("COMMIT");
    },
    async close() {
      if (open) await holder.query("ROLLBACK").catch(() => undefined);
      open = false;
      await Promise.all([holder.end(), observer.end()]);
    },
  };
}
