/** The coordinator's tuning (docs/operations.md#tuning-the-tick), with its defaults. */

export interface CoordinatorOptions {
  /** The longest sleep between ticks. @default 1000 */
  readonly tickMs?: number;
  /** Tasks admitted per batch; a tick admits batches until one comes back short. @default 500 */
  readonly admissionBatch?: number;
  /** Admission batches per tick at most, so claims are not starved. @default 20 */
  readonly admissionRounds?: number;
  /** Launches in flight on this replica at most. @default the policy's max_concurrent_runs */
  readonly maxInFlight?: number;
  /** How often the sweeps run. @default 5000 */
  readonly sweepMs?: number;
  /** Terminal runs older than this are deleted. @default 30 days */
  readonly retentionMs?: number;
  /** How long `stop()` waits for in-flight launches and running handlers. @default 10000 */
  readonly shutdownTimeoutMs?: number;
  /** Runs claimed per claim transaction at most; claims repeat while there is room. @default 250 */
  readonly claimBatch?: number;
  /** Launch answers and verdicts written per store transaction at most. @default 1000 */
  readonly writeBatch?: number;
}

const RETENTION_DEFAULT_MS = 30 * 86_400_000;

/** `options` with every default filled in; `maxInFlight` defaults to the policy's budget. */
export function withDefaults(
  options: CoordinatorOptions,
  maxConcurrentRuns: number,
): Required<CoordinatorOptions> {
  return {
    tickMs: options.tickMs ?? 1000,
    admissionBatch: options.admissionBatch ?? 500,
    admissionRounds: options.admissionRounds ?? 20,
    maxInFlight: options.maxInFlight ?? maxConcurrentRuns,
    sweepMs: options.sweepMs ?? 5000,
    retentionMs: options.retentionMs ?? RETENTION_DEFAULT_MS,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? 10_000,
    claimBatch: options.claimBatch ?? 250,
    writeBatch: options.writeBatch ?? 1000,
  };
}
