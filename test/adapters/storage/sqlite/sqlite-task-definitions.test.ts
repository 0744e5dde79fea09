/**
 * The claim's narrow read on SQLite (docs/storage.md#the-claim-reads-narrow-rows): a claimed run's task is
 * its definition as held by the store at the row's stamp (migration 20) and its state as the claim read
 * it, so it is the task as stored at that moment, whether the definition was held, read on a miss,
 * changed by an edit (a new version) or by a secret's rotation (same version, a new stamp), including
 * when another process on the same file made the change.
 */
import { afterAll, describe, expect, it } from "vitest";
import { rotateTaskSecret } from "../../../../src/domain/task-secret.js";
import type { Store } from "../../../../src/domain/ports/store.js";
import type { TaskId } from "../../../../src/domain/ids.js";
import type { Task } from "../../../../src/domain/task.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { ALL, minute, webhookTarget } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  commandMutation,
  edit,
  insertTask,
  recordCompletion,
  recordLaunch,
  reload,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-task-definitions");
afterAll(() => {
  files.remove();
});

/**
 * Admits the occurrence of minute `n` on `admitter`, claims it on `claimer` and finishes it; the claimed
 * task, checked to be the task as stored when it was claimed.
 */
async function fire(admitter: Store, claimer: Store, id: TaskId, n: number): Promise<Task> {
  const admitted = await admitDue(admitter, minute(n));
  expect(admitted.queuedRuns).toHaveLength(1);
  const stored = await reload(admitter, id);
  const claimed = await claimDue(claimer, minute(n));
  expect(claimed).toHaveLength(1);
  const [item] = claimed;
  await recordLaunch(claimer, item!, minute(n));
  await recordCompletion(claimer, item!.run.id, { status: "succeeded" }, minute(n));
  expect(item!.task).toEqual(stored);
  return item!.task;
}

describe("the claim's narrow read on SQLite", () => {
  it("claims each run with its task as stored, its definition held or read again when its row changed", async () => {
    const path = files.path();
    // Two stores on one file, as two processes: `admitter` admits (and so holds each definition it
    // read), `claimer` only claims (it holds a definition only once a claim of its own read it).
    const admitter = await openSqliteStore({ path, newId: createIdGenerator() });
    const claimer = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const task = await insertTask(admitter, { target: webhookTarget() });
      // A miss: read with the claim, then held.
      await fire(admitter, claimer, task.id, 1);
      // Held at the same version and stamp: the state (run count, last run) is the claim's, not the held one's.
      expect((await fire(admitter, claimer, task.id, 2)).runCount).toBe(1);

      // A rotation writes the definition's row without a new version.
      await admitter.tasks.mutateTask(ALL, task.id, ({ task: current }) =>
        commandMutation(
          rotateTaskSecret(current, { secret: "whsec_rotated", now: minute(2, 500), graceMs: 0 }),
        ),
      );
      expect((await fire(admitter, claimer, task.id, 3)).webhookSecret).toBe("whsec_rotated");

      // An edit: a new version.
      await edit(admitter, ALL, task.id, { title: "renamed" }, minute(3, 500));
      expect((await fire(admitter, claimer, task.id, 4)).title).toBe("renamed");

      // A write by hand (no store saw it) of the row, same version: the stamp moves all the same.
      const db = openSqliteDatabase(path);
      try {
        db.prepare("UPDATE tasks SET title = 'by hand' WHERE id = ?").run(task.id);
      } finally {
        db.close();
      }
      expect((await fire(admitter, claimer, task.id, 5)).title).toBe("by hand");
    } finally {
      await admitter.close();
      await claimer.close();
    }
  });
});
