/**
 * The hot statements of the PostgreSQL store and their plans (docs/storage.md#the-claim-path-on-postgresql):
 * a pool that records every statement the store sends, and, for the hot ones, explains each one where it
 * runs, inside its own transaction and against the rows it meets there (`EXPLAIN (ANALYZE, BUFFERS)` in a
 * savepoint that is rolled back, so nothing it does is kept), once as a custom plan and once as the generic
 * plan a named statement switches to. Used by `bench/explain-hot-path.ts` (the tables in docs/storage.md)
 * and by the structural plan test.
 */
import type {
  PostgresClient,
  PostgresPool,
  PostgresQueryResult,
  PostgresStatement,
} from "../../src/adapters/storage/postgres/postgres-pool.js";

/** One hot statement's plans, as the server printed them. */
export interface HotPlan {
  readonly label: string;
  readonly text: string;
  readonly custom: string;
  readonly generic: string;
}

/** What each hot statement is, recognised by a fragment of its text; statements not listed are not explained. */
const HOT: readonly (readonly [string, (text: string) => boolean])[] = [
  // The claim fused into admission (docs/storage.md#fused-admit-and-claim): its read, and the insert of
  // the runs claimed with their leases inserted in front (first: the read names `thread_busy` as the queue head does, the insert starts as the claim's write).
  ["admission: fused claim read", (t) => t.startsWith("WITH waiting AS MATERIALIZED")],
  [
    "admission: insert claimed runs, bind slots",
    (t) => t.startsWith("WITH bound AS (INSERT") && /INSERT INTO \S+\.runs /.test(t),
  ],
  ["claim: queued owners", (t) => t.startsWith("WITH RECURSIVE o(owner)")],
  ["claim: queue head", (t) => t.includes("AS thread_busy")],
  ["claim: take budget slots", (t) => t.includes("generate_series(1, $1::int4) AS g(slot)")],
  ["claim: lock chosen runs", (t) => t.includes("FOR UPDATE SKIP LOCKED) AS r")],
  [
    "claim: write claims, bind slots",
    (t) => t.startsWith("WITH bound AS (INSERT") && /UPDATE \S+\.runs AS t SET/.test(t),
  ],
  ["admission: due tasks", (t) => t.includes("due_at <=") && t.includes("SKIP LOCKED")],
  ["admission: active runs", (t) => t.includes("ORDER BY r.queued_at, r.id FOR UPDATE")],
  ["admission: insert decisions", (t) => /^INSERT INTO \S+\.runs /.test(t)],
  ["admission: schedule fields", (t) => t.includes("decided_through = ")],
  ["batch: read runs and tasks", (t) => t.includes("p.xmin::text AS read_xmin")],
  ["batch: fenced write", (t) => t.includes("locked AS MATERIALIZED")],
  ["batch: lock tasks", (t) => t.includes("p.schedule_type, p.options")],
  ["batch: lock runs", (t) => t.includes("p.id = w.id FOR UPDATE) AS r")],
  ["batch: write runs", (t) => /^UPDATE \S+\.runs AS t SET/.test(t)],
  ["batch: task bookkeeping", (t) => t.includes("run_count = t.run_count + u.launches")],
  ["wake: next due task", (t) => t.includes("min(s.due_at)")],
  ["wake: next run wake", (t) => t.includes("LEAST(")],
  ["sweep: expired claims", (t) => t.includes("claim_expires_at <")],
  ["sweep: past deadline", (t) => t.includes("deadline_at <")],
  ["sweep: queue timeouts", (t) => t.includes("queueTimeoutMs")],
  ["sweep: lost handler runs", (t) => t.includes("heartbeat_at <")],
];

/** The label of a hot statement (its line in docs/storage-plans.md), or null for any other statement. */
export function labelOf(text: string): string | null {
  for (const [label, matches] of HOT) if (matches(text)) return label;
  return null;
}

type Escape = (value: string) => string;

/**
 * A pool over `pool` that explains, the first time it sees each hot statement, that statement where it
 * runs. `plans` receives one entry per distinct hot statement text.
 */
export function explainingPool(pool: PostgresPool, plans: HotPlan[], escape: Escape): PostgresPool {
  const seen = new Set<string>();
  const explainIn = async (
    db: PostgresClient,
    statement: string | PostgresStatement,
    values: unknown[] | undefined,
    inTransaction: boolean,
  ): Promise<void> => {
    const text = typeof statement === "string" ? statement : statement.text;
    const label = labelOf(text);
    if (label === null || seen.has(text)) return;
    seen.add(text);
    const args = (values ?? []).map((v) => literal(v, escape));
    const execute = `EXECUTE punctual_explain${args.length === 0 ? "" : `(${args.join(", ")})`}`;
    const explain = `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON) ${execute}`;
    const open = inTransaction ? "SAVEPOINT punctual_explain" : "BEGIN";
    const close = inTransaction ? "ROLLBACK TO SAVEPOINT punctual_explain" : "ROLLBACK";
    await db.query(`PREPARE punctual_explain AS ${text}`);
    try {
      const plan = async (mode: string): Promise<string> => {
        await db.query(open);
        try {
          await db.query(`SET LOCAL plan_cache_mode = ${mode}`);
          const result = await db.query(explain);
          return result.rows.map((row) => Object.values(row as object)[0] as string).join("\n");
        } finally {
          await db.query(close);
        }
      };
      const custom = await plan("force_custom_plan");
      const generic = await plan("force_generic_plan");
      plans.push({ label, text, custom, generic });
    } finally {
      await db.query("DEALLOCATE punctual_explain");
    }
  };
  const wrapClient = (client: PostgresClient): PostgresClient => {
    let open = false;
    return {
      async query(statement, values): Promise<PostgresQueryResult> {
        const text = typeof statement === "string" ? statement : statement.text;
        if (open) await explainIn(client, statement, values, true);
        if (text.startsWith("BEGIN")) open = true;
        if (text === "COMMIT" || text === "ROLLBACK") open = false;
        return client.query(statement, values);
      },
      release: (destroy) => {
        client.release(destroy);
      },
      on: ((event: "error", listener: (error: Error) => void) =>
        client.on(event, listener)) as PostgresClient["on"],
      off: (event, listener) => client.off(event, listener),
    };
  };
  return {
    async query(statement, values): Promise<PostgresQueryResult> {
      const text = typeof statement === "string" ? statement : statement.text;
      if (labelOf(text) !== null && !seen.has(text)) {
        const client = await pool.connect();
        try {
          await explainIn(client, statement, values, false);
        } finally {
          client.release();
        }
      }
      return pool.query(statement, values);
    },
    async connect(): Promise<PostgresClient> {
      return wrapClient(await pool.connect());
    },
    end: () => pool.end(),
  };
}

function literal(value: unknown, escape: Escape): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return escape(value);
  if (Array.isArray(value)) {
    const elements = value.map((e: unknown) =>
      e === null || e === undefined
        ? "NULL"
        : `"${(typeof e === "string" ? e : JSON.stringify(e)).replace(/["\\]/g, "\\$&")}"`,
    );
    return escape(`{${elements.join(",")}}`);
  }
  return escape(JSON.stringify(value));
}

/** The plan nodes that read `table` whole (a sequential scan), in a printed plan. */
export function sequentialScansOf(plan: string, table: string): string[] {
  return plan
    .split("\n")
    .filter((line) => new RegExp(`Seq Scan on (\\S+\\.)?"?${table}"?\\b`).test(line));
}

/** Execution time and shared buffers of a printed `EXPLAIN (ANALYZE, BUFFERS)`. */
export function planFigures(plan: string): { ms: number; buffers: number } {
  const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
  const first = plan.split("\n").find((line) => line.includes("Buffers: shared")) ?? "";
  const hit = Number(/hit=(\d+)/.exec(first)?.[1] ?? 0);
  const read = Number(/read=(\d+)/.exec(first)?.[1] ?? 0);
  const dirtied = 0;
  return { ms, buffers: hit + read + dirtied };
}

/**
 * Seeds `count` terminal runs (succeeded) under one task of their own, in one statement: what
 * retention keeps in `runs` beside the live queue; and 10,000 idle (paused) tasks.
 */
export async function seedHistory(
  pool: PostgresPool,
  schema: string,
  count: number,
): Promise<void> {
  if (count === 0) return;
  const q = `"${schema}"`;
  await pool.query(
    `INSERT INTO ${q}.tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,` +
      ` thread_scope, options, metadata, webhook_secret, created_at, updated_at)` +
      ` VALUES ('history-task', 'alice', 'history', '{"type":"interval","every":"1m"}', 'interval',` +
      ` '{"kind":"agent"}', 'agent', '{}', 'run', '{}', '{}', 's', now(), now())`,
  );
  await pool.query(
    `INSERT INTO ${q}.task_state (task_id, version, status, decided_through)` +
      ` VALUES ('history-task', 1, 'paused', now())`,
  );
  await pool.query(
    `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
      ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, launched_at,` +
      ` finished_at, lateness_ms, target_kind)` +
      ` SELECT 'h' || lpad(i::text, 9, '0'), 'history-task', 'alice', 'manual',` +
      ` now() - (i || ' s')::interval, now() - (i || ' s')::interval, 'succeeded', 1,` +
      ` now() - (i || ' s')::interval, 'run', 'h' || i, false, 'h' || i,` +
      ` now() - (i || ' s')::interval, now() - (i || ' s')::interval, now() - (i || ' s')::interval, 0,` +
      ` 'agent'` +
      ` FROM generate_series(1, $1::int4) AS i`,
    [count],
  );
  // And idle tasks, so that reading the batch's tasks whole is never the cheaper plan by accident.
  await pool.query(
    `INSERT INTO ${q}.tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,` +
      ` thread_scope, options, metadata, webhook_secret, created_at, updated_at)` +
      ` SELECT 'idle-' || lpad(i::text, 6, '0'), 'alice', 'idle', '{"type":"interval","every":"1m"}',` +
      ` 'interval', '{"kind":"agent"}', 'agent', '{}', 'run', '{}', '{}', 's',` +
      ` now(), now() FROM generate_series(1, 10000) AS i`,
  );
  await pool.query(
    `INSERT INTO ${q}.task_state (task_id, version, status, decided_through)` +
      ` SELECT 'idle-' || lpad(i::text, 6, '0'), 1, 'paused', now() FROM generate_series(1, 10000) AS i`,
  );
}
