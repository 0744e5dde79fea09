import Database from "better-sqlite3";
import { migrateSqlite } from "../src/adapters/storage/sqlite/sqlite-migrations.js";
import { SqliteStore } from "../src/adapters/storage/sqlite/sqlite-store.js";
import { createIdGenerator } from "../src/adapters/storage/shared/time-ordered-id.js";
import { buildTask } from "../test/contract/fixtures.js";
for (const variant of (process.argv[2] ?? "trigger,none,trigger,none").split(",")) {
  const db = new Database(":memory:");
  db.pragma("foreign_keys = ON");
  migrateSqlite(db);
  const store = new SqliteStore(db, { newId: createIdGenerator() });
  const task = buildTask({});
  await store.tasks.insertTask(task);
  if (variant === "none") db.exec("DROP TRIGGER runs_inserted");
  if (variant === "simple") { db.exec("DROP TRIGGER runs_inserted"); db.exec(`CREATE TRIGGER runs_inserted AFTER INSERT ON runs WHEN NEW.status = 'queued' BEGIN INSERT INTO run_ready (owner, queued_at, run_id, task_id, thread_scope, thread_id, "exclusive", not_before) VALUES (NEW.owner, NEW.queued_at, NEW.id, NEW.task_id, NEW.thread_scope, NEW.thread_id, NEW."exclusive", NEW.not_before); END`); }
  const ins = db.prepare(`INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, not_before, thread_scope, thread_id, "exclusive", idempotency_key, queued_at, target_kind) VALUES (?, ?, 'o', 'manual', ?, 0, 'queued', 0, 's', ?, 0, ?, 1000, 'handler')`);
  const t0 = performance.now();
  db.transaction(() => { for (let i = 0; i < 20000; i++) { const id = `r${String(i).padStart(8, "0")}`; ins.run(id, task.id, i, id, id); } })();
  console.log(variant, ((performance.now() - t0) / 20000 * 1000).toFixed(1), "us/insert");
}
