/**
 * `npx tsx bench/trace-summary.ts <trace.json>... [--due=<epoch ms>] [--statements]`: a burst as the
 * replicas' timelines tell it (`--trace`, bench/lib/replica-trace.ts). Per replica, each admission round
 * (a transaction whose first read is the due tasks') and each claim (one whose first read is the queue's
 * owners) from the burst's instant on: its start, its duration, the tasks it read, its statements' time
 * from send to answer (the rest is the replica's JavaScript, or its wait for the CPU), the CPU it took,
 * and the gap since the previous one ended with the CPU spent in it (the launches, the handlers and the
 * batch of their answers); then the first and last handler start and the process's CPU from the instant
 * to the last start. The instant is `--due`, or the whole second at or before the first handler start.
 * With `--statements`, each statement of those transactions too.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { TraceEntry } from "./lib/replica-trace.js";

const ADMISSION_READ = "SELECT t.id AS id, t.owner AS owner";
const CLAIM_READ = "WITH RECURSIVE o(owner)";

interface Statement {
  readonly name: string;
  readonly at: number;
  readonly end: number;
  readonly cpuAt: number;
  readonly cpuEnd: number;
  readonly rows: number | undefined;
}

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith("--"));
const dueArg = args.find((a) => a.startsWith("--due="));
const listStatements = args.includes("--statements");
if (files.length === 0) {
  console.error(
    "usage: npx tsx bench/trace-summary.ts <trace.json>... [--due=<epoch ms>] [--statements]",
  );
  process.exit(2);
}

const traces = files.map((file) => ({
  name: basename(file, ".json"),
  entries: JSON.parse(readFileSync(file, "utf8")) as TraceEntry[],
}));
const firstStart = Math.min(
  ...traces.flatMap((t) => t.entries.filter((e) => e.kind === "start").map((e) => e.at)),
);
const due =
  dueArg === undefined
    ? Math.floor(firstStart / 1000) * 1000
    : Number(dueArg.slice("--due=".length));
const ms = (value: number): string => value.toFixed(1).padStart(7);
console.log(`instant ${new Date(due).toISOString()} (${due})`);

/** Each connection's statements, answered, in the order sent. */
function statementsByConnection(entries: readonly TraceEntry[]): Map<number, Statement[]> {
  const sent = new Map<number, TraceEntry[]>();
  const done = new Map<number, Statement[]>();
  for (const entry of entries) {
    const connection = entry.connection ?? 0;
    if (entry.kind === "sql") sent.set(connection, [...(sent.get(connection) ?? []), entry]);
    if (entry.kind !== "sql-end") continue;
    const waiting = sent.get(connection) ?? [];
    const at = waiting.findIndex((s) => s.name === entry.name);
    if (at < 0) continue;
    const [began] = waiting.splice(at, 1);
    const list = done.get(connection) ?? [];
    list.push({
      name: entry.name,
      at: began!.at,
      end: entry.at,
      cpuAt: began!.cpu,
      cpuEnd: entry.cpu,
      rows: entry.rows,
    });
    done.set(connection, list);
  }
  for (const list of done.values()) list.sort((a, b) => a.at - b.at);
  return done;
}

/** The admission rounds and claims: transactions from `BEGIN` to `COMMIT` (or `ROLLBACK`). */
function transactions(byConnection: Map<number, Statement[]>): Statement[][] {
  const found: Statement[][] = [];
  for (const list of byConnection.values()) {
    let open: Statement[] | null = null;
    for (const statement of list) {
      if (statement.name.startsWith("BEGIN")) open = [statement];
      else if (open !== null) {
        open.push(statement);
        if (statement.name.startsWith("COMMIT") || statement.name.startsWith("ROLLBACK")) {
          found.push(open);
          open = null;
        }
      }
    }
  }
  return found
    .filter((t) => t[1]?.name.startsWith(ADMISSION_READ) || t[1]?.name.startsWith(CLAIM_READ))
    .sort((a, b) => a[0]!.at - b[0]!.at);
}

for (const { name, entries } of traces) {
  const starts = entries.filter((e) => e.kind === "start" && e.at >= due - 1000);
  const last = starts.at(-1);
  console.log(`\n${name}: ${starts.length} handler starts`);
  if (last === undefined) continue;
  const before = entries.filter((e) => e.at < due).at(-1);
  const window = entries.filter((e) => e.at >= due - 50 && e.at <= last.at + 500);
  let previous: Statement | null = null;
  for (const round of transactions(statementsByConnection(window))) {
    const first = round[0]!;
    const end = round.at(-1)!;
    const read = round[1]!;
    const what = read.name.startsWith(ADMISSION_READ)
      ? `admission of ${read.rows ?? "?"} tasks`
      : "claim";
    const database = round.reduce((sum, s) => sum + (s.end - s.at), 0);
    const gap =
      previous === null
        ? ""
        : `; ${(first.at - previous.end).toFixed(1)} ms (CPU ${(first.cpuAt - previous.cpuEnd).toFixed(1)} ms) after the last`;
    console.log(
      `  +${ms(first.at - due)} ${ms(end.end - first.at)} ms ${what}: ${round.length} statements,` +
        ` ${database.toFixed(1)} ms send to answer, CPU ${(end.cpuEnd - first.cpuAt).toFixed(1)} ms${gap}`,
    );
    if (listStatements) {
      for (const s of round)
        console.log(`      +${ms(s.at - due)} ${ms(s.end - s.at)} ms ${s.name}`);
    }
    previous = end;
  }
  console.log(
    `  first start +${(starts[0]!.at - due).toFixed(1)} ms, last +${(last.at - due).toFixed(1)} ms;` +
      ` CPU from the instant to the last start ${(last.cpu - (before?.cpu ?? last.cpu)).toFixed(0)} ms`,
  );
}
