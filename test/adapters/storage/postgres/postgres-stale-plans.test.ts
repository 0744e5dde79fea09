/**
 * Plans made while `runs` looked empty (docs/storage.md#the-run-model-on-postgresql): a fresh database's
 * migration analyses `runs` while it holds nothing, and a prepared statement keeps the plan it made then
 * until the table is analysed again. The reads that find the active runs through the budget's slots (next
 * wake-up, queue statistics, the sweeps) must not have become a scan of `runs` per slot in such a plan:
 * with 100,000 runs copied in before autovacuum's next analysis, one next wake-up ran 9.4 s that way in
 * the bench's history variant. Here the store's only connection prepares the statements on the empty
 * table, runs arrive without an analysis, and the cached plans are run with EXPLAIN ANALYZE: no node may
 * read `runs` more than once. The same holds of the reads of runs by a list of ids on the hot path (the
 * claim's lock of its chosen runs, the fenced write's read): a lookup per id in such a plan read `runs`
 * whole once per id. A structural check, not a timing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { labelOf, seedHistory } from "../../../../bench/lib/hot-plans.js";
import { minute } from "../../../contract/fixtures.js";
import { runHotPath } from "../../../helpers/hot-path.js";
import { claimDue } from "../../../contract/store-steps.js";
import { instant } from "../../../../src/domain/time.js";
import type {
  PostgresPool,
  PostgresStatement,
} from "../../../../src/adapters/storage/postgres/postgres-pool.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

/** A statement as the store sent it: its text, its name when it went named, its values. */
interface Sent {
  readonly text: string;
  readonly name: string | null;
  readonly values: readonly unknown[];
}

/** `pool`, recording each statement sent (by the pool or a client of it) whose text `wanted` accepts. */
function recording(
  pool: PostgresPool,
  sent: Sent[],
  wanted: (text: string) => boolean,
): PostgresPool {
  const note = (statement: string | PostgresStatement, values: unknown[] | undefined): void => {
    const text = typeof statement === "string" ? statement : statement.text;
    const name = typeof statement === "string" ? null : statement.name;
    if (wanted(text)) sent.push({ text, name, values: values ?? [] });
  };
  return {
    query: (statement, values) => {
      note(statement, values);
      return pool.query(statement, values);
    },
    connect: async () => {
      const client = await pool.connect();
      return new Proxy(client, {
        get(target, property) {
          if (property === "query")
            return (statement: string | PostgresStatement, values?: unknown[]) => {
              note(statement, values);
              return target.query(statement, values);
            };
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === "function" ? (value as () => unknown).bind(target) : value;
        },
      });
    },
    end: () => pool.end(),
  };
}

/**
 * The plan a statement the store sent runs with on `connection` now: a named statement's cached plan
 * (EXECUTE), an unnamed one's made from its text (the store's next call plans it the same way).
 */
async function planNow(connection: PostgresPool, statement: Sent): Promise<string[]> {
  const values = statement.values.map((v) => (typeof v === "number" ? String(v) : "NULL"));
  const target =
    statement.name === null
      ? statement.values.reduce<string>(
          (text, _, i) => text.replaceAll(`$${i + 1}`, values[i] ?? "NULL"),
          statement.text,
        )
      : `EXECUTE "${statement.name}"${values.length === 0 ? "" : `(${values.join(", ")})`}`;
  const plan = await connection.query(`EXPLAIN (ANALYZE, COSTS OFF) ${target}`);
  return (plan.rows as Record<string, string>[]).map((r) => Object.values(r)[0] ?? "");
}

/** `count` enabled tasks due in the coming hours, in schema `q` (quoted), without an analysis. */
async function seedDueTasks(pool: PostgresPool, q: string, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO ${q}.tasks (id, owner, title, schedule, schedule_type, target, target_kind,` +
      ` context, thread_scope, options, metadata, webhook_secret, created_at, updated_at)` +
      ` SELECT 'due-' || lpad(i::text, 6, '0'), 'alice', 'due', '{"type":"interval","every":"1h"}',` +
      ` 'interval', '{"kind":"agent"}', 'agent', '{}', 'run', '{}', '{}', 's', now(), now()` +
      ` FROM generate_series(1, $1::int4) AS i`,
    [count],
  );
  await pool.query(
    `INSERT INTO ${q}.task_state (task_id, version, status, next_run_at, decided_through)` +
      ` SELECT 'due-' || lpad(i::text, 6, '0'), 1, 'enabled', now() + (i || ' s')::interval,` +
      ` now() FROM generate_series(1, $1::int4) AS i`,
    [count],
  );
}

/** What a case holds: the store on its only connection, what it sent, and a second pool to seed with. */
interface Recorded {
  readonly store: Awaited<ReturnType<typeof openPostgresStore>>;
  readonly connection: PostgresPool;
  readonly sent: Sent[];
  readonly seeding: PostgresPool;
  readonly schema: string;
  /** The schema's name quoted. */
  readonly q: string;
}

/**
 * Runs `body` with a store opened on a fresh schema over one connection, recording the statements
 * `wanted` accepts, and closes the store after it.
 */
async function withRecordingStore(
  wanted: (text: string) => boolean,
  body: (recorded: Recorded) => Promise<void>,
): Promise<void> {
  const schema = database.freshSchema();
  const connection = database.pool(1);
  const sent: Sent[] = [];
  const store = await openPostgresStore({
    newId: createIdGenerator(),
    pool: recording(connection, sent, wanted),
    schema,
  });
  try {
    await body({ store, connection, sent, seeding: database.pool(1), schema, q: `"${schema}"` });
  } finally {
    await store.close();
  }
}

describe.skipIf(database.kind !== "server")("plans prepared while runs was empty", () => {
  it(
    "read runs once per call, by key, not once per budget slot nor whole",
    { timeout: 120_000 },
    () =>
      withRecordingStore(
        (text) =>
          text.includes("claim_slots") &&
          (text.includes("min(not_before)") ||
            text.includes("count(*)") ||
            text.includes("deadline_at <")),
        async ({ store, connection, sent, seeding, schema }) => {
          // No analysis may come between the plans and the check.
          await seeding.query(`ALTER TABLE "${schema}".runs SET (autovacuum_enabled = false)`);
          const now = instant(Date.now());
          await store.runs.nextRunWakeAt();
          await store.runs.queueStats(now);
          await store.runs.findPastDeadline(now, 10);
          await seedHistory(seeding, schema, 20_000);
          expect(new Set(sent.map((s) => s.text)).size).toBe(3);
          for (const statement of sent.slice(0, 3)) {
            const lines = await planNow(connection, statement);
            const readsOfRuns = lines.filter((line) => / on runs\b/.test(line));
            expect(readsOfRuns.length, lines.join("\n")).toBeGreaterThan(0);
            for (const line of readsOfRuns) {
              expect(line, lines.join("\n")).toMatch(/loops=1\)/);
              // Since the next wake-up runs at every pass (twice a second in a steady flow), a plan
              // that reads `runs` whole costs as the ledger grows (28 ms a call at 80,000 runs).
              expect(line, lines.join("\n")).not.toMatch(/Seq Scan on runs\b/);
            }
          }
        },
      ),
  );

  it(
    "find the next due task by task_state_due_idx, not by reading task_state whole",
    { timeout: 120_000 },
    () =>
      withRecordingStore(
        (text) => text.includes("min(s.due_at)"),
        async ({ store, connection, sent, seeding, q }) => {
          await seeding.query(`ALTER TABLE ${q}.task_state SET (autovacuum_enabled = false)`);
          await store.tasks.nextDueAt();
          // 20,000 enabled tasks due in the coming hour, arrived after the plan, without an analysis.
          await seedDueTasks(seeding, q, 20_000);
          expect(await store.tasks.nextDueAt()).not.toBeNull();
          expect(sent.length).toBe(2);
          const lines = await planNow(connection, sent[1] as Sent);
          expect(lines.join("\n")).toMatch(/Index Only Scan using task_state_due_idx/);
          expect(lines.join("\n")).not.toMatch(/Seq Scan on task_state\b/);
        },
      ),
  );

  it("find no deleted task to purge without reading tasks whole", { timeout: 120_000 }, () =>
    withRecordingStore(
      // The store's reads and writes of deleted tasks (not the migrations' index on them).
      (text) => /^(SELECT|WITH)\b/.test(text) && text.includes("deleted_at IS NOT NULL"),
      async ({ store, connection, sent, seeding, q }) => {
        await seeding.query(`ALTER TABLE ${q}.tasks SET (autovacuum_enabled = false)`);
        await seedDueTasks(seeding, q, 20_000);
        // A steady flow's leases, taken and given back since the last vacuum: `claim_slots` looks
        // large, and no index of it has the task of a run that is not exclusive.
        await seeding.query(`ALTER TABLE ${q}.claim_slots SET (autovacuum_enabled = false)`);
        await seeding.query(
          `INSERT INTO ${q}.claim_slots (slot, exclusive, run_id, thread_scope, owner, run_task_id)` +
            ` SELECT i, false, 'r' || i, 'run', 'alice', 'due-' || lpad(i::text, 6, '0')` +
            ` FROM generate_series(1, 20000) AS i`,
        );
        await seeding.query(`DELETE FROM ${q}.claim_slots`);
        expect(await store.runs.purge(instant(Date.now() - 60_000), 100)).toBe(0);
        // Retention runs at every sweep: with no task deleted, the purge of deleted tasks (a plan of
        // about 120,000 in cost units here, compiled by JIT at each call) is not sent at all, and what
        // found none read no table whole.
        expect(sent.filter((s) => s.text.includes("DELETE FROM"))).toEqual([]);
        expect(sent.length).toBe(1);
        const lines = await planNow(connection, sent[0] as Sent);
        expect(lines.join("\n")).not.toMatch(/Seq Scan on tasks\b/);
      },
    ),
  );

  it(
    "find the owners with queued runs by run_ready_owner_queue_idx, not by reading the queue whole",
    { timeout: 120_000 },
    () =>
      withRecordingStore(
        (text) => text.startsWith("WITH RECURSIVE o(owner)"),
        async ({ store, connection, sent, seeding, q }) => {
          await seeding.query(`ALTER TABLE ${q}.run_ready SET (autovacuum_enabled = false)`);
          // The queue analysed while empty, as autovacuum does in a quiet moment (an analysis makes every
          // connection plan again at its next call), then a claim that finds it empty: later claims, with
          // runs queued, would reuse that claim's plan.
          await seeding.query(`ANALYZE ${q}.run_ready`);
          await claimDue(store, minute(10), { limit: 4, maxConcurrentRuns: 8 });
          await runHotPath(store, minute(10), 4);
          expect(sent.length).toBeGreaterThan(1);
          // 10,000 queued runs of three owners, arrived after the claims above, without an analysis.
          await seeding.query(
            `INSERT INTO ${q}.run_ready (run_id, owner, task_id, exclusive, queued_at, not_before)` +
              ` SELECT 'q' || i, 'owner-' || (i % 3), 'task', false, now(), now()` +
              ` FROM generate_series(1, 10000) AS i`,
          );
          const lines = await planNow(connection, sent[sent.length - 1] as Sent);
          // A claim reads the owners each time it runs: one probe of the index per owner, never a read
          // and sort of the queue per owner.
          expect(lines.join("\n")).toMatch(/Index Only Scan using run_ready_owner_queue_idx/);
          expect(lines.join("\n")).not.toMatch(/Seq Scan on run_ready\b/);
        },
      ),
  );

  it(
    "read runs once per call to lock a claim's chosen runs and to read a fenced write's runs",
    { timeout: 120_000 },
    async () => {
      const schema = database.freshSchema();
      const connection = database.pool(1);
      const store = await openPostgresStore({
        newId: createIdGenerator(),
        pool: connection,
        schema,
      });
      try {
        const seeding = database.pool(1);
        await seeding.query(`ALTER TABLE "${schema}".runs SET (autovacuum_enabled = false)`);
        // A named statement switches to its generic plan after five calls; here at once, while `runs`
        // holds only the hot path's own few runs.
        await connection.query("SET plan_cache_mode = force_generic_plan");
        await runHotPath(store, minute(10), 4);
        await seedHistory(seeding, schema, 20_000);
        const prepared = (
          await connection.query("SELECT name, statement FROM pg_prepared_statements")
        ).rows as { name: string; statement: string }[];
        // Fifty runs that arrived after the plans (seedHistory's ids).
        const ids = Array.from({ length: 50 }, (_, i) => `h${String(i + 1).padStart(9, "0")}`);
        for (const label of ["claim: lock chosen runs", "batch: read runs and tasks"]) {
          const statements = prepared.filter((row) => labelOf(row.statement) === label);
          expect(statements.length, label).toBe(1);
          const name = statements[0]?.name ?? "";
          const plan = await connection.query(
            `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "${name}"('{${ids.join(",")}}')`,
          );
          const lines = (plan.rows as Record<string, string>[]).map(
            (r) => Object.values(r)[0] ?? "",
          );
          const readsOfRuns = lines.filter((line) => / on runs\b/.test(line));
          expect(readsOfRuns.length, `${label}\n${lines.join("\n")}`).toBeGreaterThan(0);
          for (const line of readsOfRuns) {
            expect(line, `${label}\n${lines.join("\n")}`).toMatch(/loops=1\)/);
          }
        }
      } finally {
        await store.close();
      }
    },
  );
});
