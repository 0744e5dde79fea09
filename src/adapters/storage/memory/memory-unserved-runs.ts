/**
 * The no-handler sweep's find in memory (docs/semantics.md#handler-runs-nobody-serves): queued runs of
 * handler tasks whose handler no live replica serves, oldest `not_before` first. Called inside one atomic
 * transaction over `MemoryTables` (memory-run-repository.ts).
 */
import type { UnservedRun } from "../../../domain/ports/run-repository.js";
import type { Instant } from "../../../domain/time.js";
import { taskOfRun } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

export class MemoryUnservedRuns {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  find(dueBefore: Instant, served: readonly string[], limit: number): UnservedRun[] {
    return this.#tables
      .activeRuns()
      .filter((run) => run.status === "queued" && run.notBefore < dueBefore)
      .map((run) => ({ run, target: taskOfRun(this.#tables, run).target }))
      .filter(({ target }) => target.kind === "handler" && !served.includes(target.name))
      .sort((a, b) => a.run.notBefore - b.run.notBefore || (a.run.id < b.run.id ? -1 : 1))
      .slice(0, Math.max(0, limit))
      .map(({ run, target }) => ({
        id: run.id,
        handlerName: target.kind === "handler" ? target.name : "",
      }));
  }
}
