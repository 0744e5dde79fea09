/**
 * Each store folder has the same role files, and the protocols written once stay written once (issue 30,
 * item 3; src/adapters/storage/README.md#role-files): every store has a file for every role of the
 * table, and the README's table names them; no store mints a claim's fencing token outside the shared
 * claim round (`shared/claim-round.ts`), nor builds a fenced write's lease_lost refusal outside the shared
 * fence (`shared/run-change-batch.ts`); the port and the stores change runs by one method, `changeRuns`
 * (a single change is a batch of one).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { codeOnly, listTs, ROOT } from "./source-scan.js";

const STORAGE = join(ROOT, "src/adapters/storage");
const STORES = ["memory", "sqlite", "postgres"] as const;
/** The role files' names after the store's prefix, one per row of the README's table. */
const ROLES = [
  "run-repository",
  "claim",
  "fenced-run-writes",
  "run-sweeps",
  "unserved-runs",
  "run-search",
  "admission",
] as const;

/** The one file of the storage adapters allowed each pattern in its code. */
const WRITTEN_ONCE = [
  {
    what: "a claim's fencing token minted",
    pattern: /\bfencingToken\s*\(/,
    home: "shared/claim-round.ts",
  },
  { what: "a random token drawn", pattern: /\brandomUUID\b/, home: "shared/claim-round.ts" },
  {
    what: "a fenced write refused",
    pattern: /\bnew\s+LeaseLostError\b/,
    home: "shared/run-change-batch.ts",
  },
] as const;

/** The storage files (relative to src/adapters/storage) whose code matches `pattern`. */
function filesMatching(
  files: readonly string[],
  read: (file: string) => string,
  pattern: RegExp,
): string[] {
  return files
    .filter((file) => pattern.test(codeOnly(read(file))))
    .map((file) => relative(STORAGE, file).split(sep).join("/"));
}

describe("the storage adapters' role files", () => {
  it.each(STORES)("%s has a file for every role", (store) => {
    const missing = ROLES.map((role) => `${store}/${store}-${role}.ts`).filter(
      (path) => !existsSync(join(STORAGE, path)),
    );
    expect(missing).toEqual([]);
  });

  it("are the ones the README's table names, a file per store on every row", () => {
    const readme = readFileSync(join(STORAGE, "README.md"), "utf8");
    const rows = readme
      .split("\n")
      .filter((line) => /^\| [a-z]/.test(line) && line.includes(".ts`"));
    expect(rows).toHaveLength(ROLES.length);
    for (const role of ROLES) {
      const row = rows.find((line) => line.includes(`-${role}.ts\``));
      expect(row, role).toBeDefined();
      const cells = (row ?? "").split("|").slice(3, 6);
      STORES.forEach((store, i) => {
        expect(cells[i]?.trim().startsWith(`\`${store}-${role}.ts\``), `${role}: ${store}`).toBe(
          true,
        );
      });
    }
  });
});

describe("the protocols every store shares", () => {
  const files = listTs(STORAGE);

  it.each(WRITTEN_ONCE)("has $what in $home only", ({ pattern, home }) => {
    expect(filesMatching(files, (file) => readFileSync(file, "utf8"), pattern)).toEqual([home]);
  });

  it("is caught when a store mints its own token or refuses a fenced write itself", () => {
    const sources = new Map([
      [join(STORAGE, "shared/claim-round.ts"), "claim(run, task, fencingToken(randomUUID()))"],
      [join(STORAGE, "sqlite/sqlite-claim.ts"), "const token = fencingToken (randomUUID());"],
      [join(STORAGE, "postgres/postgres-run-repository.ts"), "throw new LeaseLostError(`lost`);"],
      [join(STORAGE, "memory/memory-claim.ts"), "// fencingToken(randomUUID()) in a comment"],
    ]);
    const read = (file: string): string => sources.get(file) ?? "";
    const [token, random, lease] = WRITTEN_ONCE;
    expect(filesMatching([...sources.keys()], read, token.pattern)).toEqual([
      "shared/claim-round.ts",
      "sqlite/sqlite-claim.ts",
    ]);
    expect(filesMatching([...sources.keys()], read, random.pattern)).toEqual([
      "shared/claim-round.ts",
      "sqlite/sqlite-claim.ts",
    ]);
    expect(filesMatching([...sources.keys()], read, lease.pattern)).toEqual([
      "postgres/postgres-run-repository.ts",
    ]);
  });
});

/** The port, and each store's run repository and fenced writes: where a run-change method is declared. */
const RUN_CHANGERS = [
  join(ROOT, "src/domain/ports/run-repository.ts"),
  ...STORES.flatMap((store) =>
    ["run-repository", "fenced-run-writes"].map((role) =>
      join(STORAGE, `${store}/${store}-${role}.ts`),
    ),
  ),
];

/** The public methods (an interface's or a class's members) whose name starts with `change`. */
function changeMethods(source: string): string[] {
  const names = [...codeOnly(source).matchAll(/^ {2}(?:async\s+)?(change\w*)\s*[(<]/gm)];
  return names.map((match) => match[1] ?? "");
}

describe("the run changes of the port and the stores", () => {
  it.each(RUN_CHANGERS.map((file) => relative(ROOT, file)))("%s has changeRuns only", (file) => {
    const methods = changeMethods(readFileSync(join(ROOT, file), "utf8"));
    expect(methods.length).toBeLessThanOrEqual(1);
    expect(methods.filter((name) => name !== "changeRuns")).toEqual([]);
  });

  it("is caught when a second run-change method comes back", () => {
    const source = [
      "export interface RunRepository {",
      "  changeRun(",
      "    id: RunId,",
      "  ): Promise<RunChange | null>;",
      "  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]>;",
      "  async changeOne<T>(request: RunChangeRequest): Promise<T> {",
      "  #changeRunsLocked(requests) {",
      "}",
    ].join("\n");
    expect(changeMethods(source)).toEqual(["changeRun", "changeRuns", "changeOne"]);
  });
});
