/**
 * One place emits `run:changed` (issue 30; docs/architecture.md#events): `reportRunChanged` in
 * `application/runs/reported-change.ts`, so the event's shape and its "only when the status changed"
 * rule are written once. Every other source file reports a run's change through it.
 */
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { listTs, ROOT } from "./source-scan.js";

const SRC = join(ROOT, "src");
const EMITTER = "application/runs/reported-change.ts";

/** The files under src/ that emit `run:changed` themselves. */
function emittersOf(files: readonly string[], read: (file: string) => string): string[] {
  return files
    .filter((file) => /\.emit\(\s*["']run:changed["']/.test(read(file)))
    .map((file) => relative(SRC, file).split(sep).join("/"));
}

describe("the run:changed event", () => {
  it("is emitted from one file", () => {
    expect(emittersOf(listTs(SRC), (file) => readFileSync(file, "utf8"))).toEqual([EMITTER]);
  });

  it("is caught when another file emits it", () => {
    const sources = new Map([
      [join(SRC, EMITTER), `events.emit("run:changed", event);`],
      [join(SRC, "application/elsewhere.ts"), `deps.events.emit(\n  "run:changed", {});`],
    ]);
    expect(emittersOf([...sources.keys()], (file) => sources.get(file) ?? "")).toEqual([
      EMITTER,
      "application/elsewhere.ts",
    ]);
  });
});
