/** What every group of contract cases receives: the store opened for the current test. */
import type { Store } from "../../../src/domain/ports/store.js";
import type { TaskId } from "../../../src/domain/ids.js";
import type { TaskDefectField } from "../../../src/domain/task-defect.js";

/**
 * Writes `raw` (JSON text) into one JSON column of a stored task, behind the store's back: an UPDATE
 * on the database itself for SQLite and PostgreSQL, the memory store's own hook for memory.
 */
export type CorruptTaskColumn = (
  store: Store,
  id: TaskId,
  column: TaskDefectField,
  raw: string,
) => Promise<void>;

export interface ContractContext {
  /** The fresh, empty, migrated store of the running test. */
  readonly store: () => Store;
  readonly corruptTaskColumn: CorruptTaskColumn;
}
