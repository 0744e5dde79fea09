/**
 * The peers' APIs, as the few structural types the bench uses (they are installed under bench/peers/ only,
 * so punctual's type check never depends on them), and their loaders. Imported from this folder, bare
 * names resolve to bench/peers/node_modules.
 */

export interface PgBossJob {
  readonly id: string;
  readonly data: { readonly k?: string };
}

export interface PgBossInstance {
  on(event: "error", listener: (error: Error) => void): void;
  start(): Promise<unknown>;
  stop(options?: {
    graceful?: boolean;
    wait?: boolean;
    timeout?: number;
    close?: boolean;
  }): Promise<void>;
  createQueue(name: string): Promise<void>;
  schedule(name: string, cron: string, data?: object, options?: { tz?: string }): Promise<void>;
  insert(
    jobs: readonly { name: string; data?: object; startAfter?: Date; retryLimit?: number }[],
  ): Promise<void>;
  work(
    name: string,
    options: { batchSize?: number; pollingIntervalSeconds?: number },
    handler: (jobs: readonly PgBossJob[]) => Promise<void>,
  ): Promise<string>;
}

export type PgBossConstructor = new (options: Record<string, unknown>) => PgBossInstance;

export async function loadPgBoss(): Promise<PgBossConstructor> {
  const specifier: string = "pg-boss";
  const module = (await import(specifier)) as { default: PgBossConstructor };
  return module.default;
}

export interface GraphileJob {
  readonly id: string;
  readonly attempts: number;
}

export interface GraphileHelpers {
  readonly job: GraphileJob;
}

export type GraphileTask = (payload: unknown, helpers: GraphileHelpers) => Promise<void> | void;

export interface GraphileRunner {
  stop(): Promise<void>;
  readonly promise: Promise<void>;
}

export interface GraphileWorkerUtils {
  addJobs(
    specs: readonly { identifier: string; payload: unknown; runAt?: Date; maxAttempts?: number }[],
  ): Promise<readonly unknown[]>;
  migrate(): Promise<void>;
  release(): Promise<void>;
}

export interface GraphileModule {
  run(options: Record<string, unknown>): Promise<GraphileRunner>;
  makeWorkerUtils(options: Record<string, unknown>): Promise<GraphileWorkerUtils>;
  parseCronItems(
    items: readonly { task: string; match: string; identifier: string; payload?: object }[],
  ): unknown[];
  Logger: new (factory: () => (level: string, message: string) => void) => unknown;
}

export async function loadGraphileWorker(): Promise<GraphileModule> {
  const specifier: string = "graphile-worker";
  return (await import(specifier)) as GraphileModule;
}

/** graphile-worker logs every job at info level: the bench keeps warnings and errors only. */
export function quietGraphileLogger(module: GraphileModule): unknown {
  return new module.Logger(() => (level, message) => {
    if (level === "error" || level === "warning") process.stderr.write(`[graphile] ${message}\n`);
  });
}

export interface BullJob {
  readonly id?: string;
  readonly data: { readonly k?: string };
  readonly attemptsMade: number;
}

export interface BullJobOptions {
  readonly delay?: number;
  readonly removeOnComplete?: boolean;
  readonly removeOnFail?: boolean;
  readonly attempts?: number;
}

export interface BullConnection {
  readonly host: string;
  readonly port: number;
  readonly maxRetriesPerRequest: null;
}

export interface BullQueue {
  waitUntilReady(): Promise<unknown>;
  addBulk(
    jobs: readonly { name: string; data: unknown; opts?: BullJobOptions }[],
  ): Promise<unknown[]>;
  obliterate(options?: { force?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export interface BullWorker {
  waitUntilReady(): Promise<unknown>;
  on(event: "error", listener: (error: Error) => void): void;
  close(force?: boolean): Promise<void>;
}

export interface BullModule {
  Queue: new (name: string, options: { connection: BullConnection; prefix?: string }) => BullQueue;
  Worker: new (
    name: string,
    processor: (job: BullJob) => Promise<void>,
    options: {
      connection: BullConnection;
      prefix?: string;
      concurrency?: number;
      removeOnComplete?: { count: number };
    },
  ) => BullWorker;
}

export async function loadBullMq(): Promise<BullModule> {
  const specifier: string = "bullmq";
  return (await import(specifier)) as BullModule;
}

/** The connection options BullMQ's workers require (`maxRetriesPerRequest: null`) for `redis://host:port`. */
export function bullConnection(url: string): BullConnection {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    maxRetriesPerRequest: null,
  };
}

export interface RedisClient {
  info(section: string): Promise<string>;
  config(op: "GET", key: string): Promise<string[]>;
  quit(): Promise<unknown>;
  on(event: "error", listener: (error: Error) => void): void;
}

/** ioredis (BullMQ's client), for the bench's own look at the server. */
export async function loadRedis(): Promise<new (url: string, options?: object) => RedisClient> {
  const specifier: string = "ioredis";
  const module = (await import(specifier)) as {
    default: new (url: string, options?: object) => RedisClient;
  };
  return module.default;
}
