/** The machine a run was measured on: what the table's header says, so figures are never read bare. */
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, totalmem } from "node:os";

export interface Machine {
  readonly date: string;
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly postgres: string;
  /** 1, 5 and 15-minute load averages when the run started and ended. */
  readonly loadAtStart: readonly number[];
  loadAtEnd: readonly number[];
}

function cpuModel(): string {
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8");
    const line = info.split("\n").find((l) => l.startsWith("model name"));
    return line?.split(":")[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

export function loadAverage(): number[] {
  return loadavg().map((v) => Math.round(v * 100) / 100);
}

export function describeMachine(postgres: string): Machine {
  return {
    date: new Date().toISOString(),
    nproc: availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres: /PostgreSQL [0-9.]+/.exec(postgres)?.[0] ?? postgres,
    loadAtStart: loadAverage(),
    loadAtEnd: [],
  };
}
