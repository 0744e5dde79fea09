/**
 * `npx tsx bench/trace-summary.ts <trace.json>... [--due=<epoch ms>] [--statements]`: a burst as the
 * replicas' timelines tell it (`--trace`, bench/lib/replica-trace.ts): per replica, each admission round
 * and claim from the burst's instant on (start, duration, tasks, runs claimed, the statements sent during
 * it and their summed time from send to answer, the gap since the previous one ended and the CPU in
 * it), the first and last handler start, and the process's CPU from the instant to the last start. The
 * instant is `--due`, or the whole second at or before the first handler start. With `--statements`,
 * each statement too.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { TraceEntry } from "./lib/replica-trace.js";

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

for (const { name, entries } of traces) {
  const starts = entries.filter((e) => e.kind === "start" && e.at >= due - 1000);
  const last = starts.at(-1);
  const before = entries.filter((e) => e.at < due).at(-1);
  console.log(`\n${name}: ${starts.length} handler starts`);
  if (last === undefined) continue;
  console.log(
    `  first start +${(starts[0]!.at - due).toFixed(1)} ms, last +${(last.at - due).toFixed(1)} ms;` +
      ` CPU from the instant to the last start ${(last.cpu - (before?.cpu ?? last.cpu)).toFixed(0)} ms`,
  );
  const window = entries.filter((e) => e.at >= due - 50 && e.at <= last.at + 500);
  const open = new Map<string, TraceEntry>();
  const sent = new Map<string, number[]>();
  const statements: { at: number; end: number; name: string }[] = [];
  for (const entry of window) {
    if (entry.kind === "sql") sent.set(entry.name, [...(sent.get(entry.name) ?? []), entry.at]);
    if (entry.kind === "sql-end") {
      const at = sent.get(entry.name)?.shift();
      if (at !== undefined) statements.push({ at, end: entry.at, name: entry.name });
    }
  }
  let previousEnd: TraceEntry | null = null;
  for (const entry of window) {
    if (entry.kind === "span") open.set(entry.name, entry);
    if (entry.kind !== "span-end") continue;
    const began = open.get(entry.name);
    if (began === undefined) continue;
    open.delete(entry.name);
    const inside = statements.filter((s) => s.at >= began.at && s.at <= entry.at);
    const database = inside.reduce((sum, s) => sum + (s.end - s.at), 0);
    const attrs = { ...began.attributes, ...entry.attributes };
    const count = (key: string): string => {
      const value = attrs[key];
      return typeof value === "number" ? String(value) : "?";
    };
    const what =
      entry.name === "punctual.admission"
        ? `admission ${count("punctual.admission.tasks")} tasks, claimed ${count("punctual.claim.runs")}`
        : `claim ${count("punctual.claim.runs")} runs`;
    const gap =
      previousEnd === null
        ? ""
        : `, ${(began.at - previousEnd.at).toFixed(1)} ms (CPU ${(began.cpu - previousEnd.cpu).toFixed(1)} ms) after the last`;

    console.log(
      `  +${ms(began.at - due)} ${ms(entry.at - began.at)} ms ${what}: ${inside.length} statements` +
        ` sent, ${database.toFixed(1)} ms send to answer, CPU ${(entry.cpu - began.cpu).toFixed(1)} ms${gap}`,
    );
    if (listStatements) {
      for (const s of inside) {
        console.log(`      +${ms(s.at - due)} ${ms(s.end - s.at)} ms ${s.name}`);
      }
    }
    previousEnd = entry;
  }
}
