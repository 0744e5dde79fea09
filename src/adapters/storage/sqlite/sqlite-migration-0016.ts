/**
 * SQLite migration 16 (issue 35): a webhook or handler thread belongs to its owner
 * (docs/semantics.md#threads). Its scope was the target kind alone, so two owners naming one
 * `reuse_thread` label shared a thread; it is now `webhook:<owner>` or `handler:<owner>`, and the rows
 * written before take their owner into their scope (tasks and every run). Agent scopes
 * (`agent:<server>`) are unchanged. Values only: no column, key or index changes, and the scopes only
 * grow more distinct, so no unique key can clash.
 */
export const SQLITE_MIGRATION_0016 = `
UPDATE tasks SET thread_scope = thread_scope || ':' || owner
 WHERE thread_scope IN ('webhook', 'handler');
UPDATE runs SET thread_scope = thread_scope || ':' || owner
 WHERE thread_scope IN ('webhook', 'handler');
`;
