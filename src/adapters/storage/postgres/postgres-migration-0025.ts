/**
 * Migration 25 (issue 35): a webhook or handler thread belongs to its owner (docs/semantics.md#threads).
 * Its scope was the target kind alone, so two owners naming one `reuse_thread` label shared a thread
 * (one run at a time, FIFO across both); it is now `webhook:<owner>` or `handler:<owner>`. The rows
 * written before take their owner into their scope: tasks, runs (every run, so a thread's history reads
 * under one scope) and the budget slots a launching or running run holds. Agent scopes
 * (`agent:<server>`) are unchanged: an agent thread is the server's, guarded there by `punctual_owner`.
 * Values only: no column, key or index changes, and the scopes only grow more distinct, so no unique key
 * can clash. The `runs` update rewrites every webhook and handler run once, in the migration's transaction.
 */
export const POSTGRES_MIGRATION_0025 = `
UPDATE tasks SET thread_scope = thread_scope || ':' || owner
 WHERE thread_scope IN ('webhook', 'handler');
UPDATE runs SET thread_scope = thread_scope || ':' || owner
 WHERE thread_scope IN ('webhook', 'handler');
UPDATE claim_slots SET thread_scope = thread_scope || ':' || owner
 WHERE thread_scope IN ('webhook', 'handler') AND owner IS NOT NULL;
`;
