/**
 * Migration 26 (issue 35): `runs_per_minute` across replicas (docs/decisions.md#runs-per-minute-across-replicas).
 * Each store counts the runs it queues per owner in one-second buckets of a one-minute ring: the row of
 * (owner, shard, slot) holds the bucket that began at `bucket_at` (slot = its second of the minute) and
 * is overwritten when the ring comes round, so an owner has at most 60 rows per shard. A store picks one
 * shard of 16 at random: replicas on different shards never write the same row. No index but the key,
 * and an update never changes the key: each write is a heap-only update.
 */
export const POSTGRES_MIGRATION_0026 = `
CREATE TABLE admission_counts (
  owner      text        NOT NULL,
  shard      int2        NOT NULL,
  slot       int2        NOT NULL CONSTRAINT admission_counts_slot_check CHECK (slot BETWEEN 0 AND 59),
  bucket_at  timestamptz NOT NULL,
  runs       int4        NOT NULL,
  PRIMARY KEY (owner, shard, slot)
) WITH (fillfactor = 50);
`;
