/**
 * The connection poolers the PostgreSQL store knows (docs/operations.md#pgbouncer). Apart from
 * postgres-store.ts so that the command line can check `--pg-pooler` without loading `pg`.
 */
export const POSTGRES_POOLERS = ["none", "transaction"] as const;
export type PostgresPooler = (typeof POSTGRES_POOLERS)[number];
