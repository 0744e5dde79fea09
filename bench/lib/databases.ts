/**
 * The bench's databases: a fresh PostgreSQL database per scenario and target (`punctual_bench_*`), and a
 * temporary folder per SQLite file. Everything made here is dropped by `dropAll()`, which the runner
 * calls at the end, on failure and on Ctrl-C.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { progress } from "./progress.js";

const created = new Set<string>();
const folders = new Set<string>();
let adminUrl = "postgres://postgres@127.0.0.1:5432/postgres";

export function setAdminUrl(url: string): void {
  adminUrl = url;
}

export async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The rows of one statement on a connection of its own to `url` (the measuring scripts' reads). */
export async function queryOnce(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
}

/** Creates `punctual_bench_<label>_<random>` and returns its URL. */
export async function createDatabase(label: string): Promise<BenchDatabase> {
  const safe = label.toLowerCase().replace(/[^a-z0-9]+/g, "_");
  const name = `punctual_bench_${safe}_${randomBytes(3).toString("hex")}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  created.add(name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  created.delete(name);
}

/** A temporary folder for a SQLite file (removed by `dropAll`). */
export function createFolder(label: string): string {
  const folder = mkdtempSync(join(tmpdir(), `punctual-bench-${label}-`));
  folders.add(folder);
  return folder;
}

export function removeFolder(folder: string): void {
  rmSync(folder, { recursive: true, force: true });
  folders.delete(folder);
}

/** Drops every database and folder this process made and has not dropped yet. */
export async function dropAll(): Promise<void> {
  for (const folder of [...folders]) removeFolder(folder);
  for (const name of [...created]) {
    try {
      await dropDatabase(name);
    } catch (error) {
      progress("cleanup", `could not drop ${name}: ${String(error)}`);
    }
  }
}

/** The server's version string (`PostgreSQL 15.x ...`), and whether it answers at all. */
export async function serverVersion(): Promise<string> {
  return withAdmin(async (admin) => {
    const result = await admin.query<{ v: string }>("SELECT version() AS v");
    return result.rows[0]?.v ?? "unknown";
  });
}
