/**
 * Prometheus metrics (prom-client, docs/operations.md#metrics-and-probes): what this replica decided, claimed and
 * launched, how late and how fast, what the fleet's queue holds, whether this replica's heartbeat and store
 * are healthy, and (in `punctual serve`) the HTTP traffic. Each scheduler has its own registry. The
 * scheduler's numbers come from its events (`listenTo`); the queue is read from the store at scrape time.
 * Labels are bounded (kinds, statuses, reasons); per-task labels only behind `perTaskLabels`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { SchedulerEvents } from "../../application/events/internal-events.js";
import type { Admission } from "../../domain/admission.js";
import type { QueueStats } from "../../domain/ports/run-repository.js";
import type { Run, RunStatus } from "../../domain/run.js";
import type { TargetKind } from "../../domain/target.js";

/** prom-client's default gauges whose names `promtool check metrics` refuses (docs/operations.md#metrics-and-probes). */
const UNCHECKED_DEFAULT_METRICS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

export interface MetricsOptions {
  /** Label decisions with `task_id` (unbounded cardinality: off by default). */
  readonly perTaskLabels?: boolean;
  /** Process metrics (CPU, memory, event loop). @default true */
  readonly processMetrics?: boolean;
}

/** What the metrics read at scrape time besides the events. */
export interface MetricsSources {
  /** Runs this replica is launching or running in process: the claims it holds. */
  readonly inFlight: () => number;
  /** The global budget in force. */
  readonly budget: () => number;
  /** The fleet's queue now (a store read; a failure is reported as `punctual_store_up 0`). */
  readonly queue: () => Promise<QueueStats>;
  /** This replica's clock, in epoch milliseconds (its heartbeats are stamped with it). */
  readonly now: () => number;
  /**
   * When this replica's last heartbeat was written, or null before the first: read at scrape time, so
   * a beat written before the metrics listened counts too (a worker loads them after it started).
   */
  readonly lastHeartbeatAt?: () => number | null;
}

const SECOND_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class SchedulerMetrics {
  readonly registry = new Registry();
  readonly #perTask: boolean;
  readonly #decisions: Counter;
  readonly #runs: Counter;
  readonly #lateness: Histogram;
  readonly #tick: Histogram;
  readonly #admission: Histogram;
  readonly #claim: Histogram;
  readonly #batch: Histogram;
  readonly #storeErrors: Counter;
  readonly #replicasLost: Counter;
  readonly #defects: Counter;
  readonly #http: Counter;
  #sources: MetricsSources | null = null;
  #lastHeartbeatAt: number | null = null;

  constructor(options: MetricsOptions = {}) {
    this.#perTask = options.perTaskLabels ?? false;
    const registers = [this.registry];
    this.#decisions = new Counter({
      name: "punctual_decisions_total",
      help: "Occurrence decisions by kind (queue, skip, miss) and reason",
      labelNames: this.#perTask ? ["kind", "reason", "task_id"] : ["kind", "reason"],
      registers,
    });
    this.#runs = new Counter({
      name: "punctual_runs_total",
      help: "Run status changes recorded by this replica, by the status reached, its reason and the target kind",
      labelNames: ["status", "reason", "target_kind"],
      registers,
    });
    this.#lateness = new Histogram({
      name: "punctual_launch_lateness_seconds",
      help: "How long after its fire time a run was launched, by target kind",
      labelNames: ["target_kind"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
      registers,
    });
    this.#tick = new Histogram({
      name: "punctual_tick_duration_seconds",
      help: "Duration of one coordinator pass (sweep, admit, claim)",
      buckets: SECOND_BUCKETS,
      registers,
    });
    this.#admission = new Histogram({
      name: "punctual_admission_duration_seconds",
      help: "Duration of one admission batch (deciding and writing the due tasks' occurrences)",
      buckets: SECOND_BUCKETS,
      registers,
    });
    this.#claim = new Histogram({
      name: "punctual_claim_duration_seconds",
      help: "Duration of one claim of queued runs within the global budget",
      buckets: SECOND_BUCKETS,
      registers,
    });
    this.#batch = new Histogram({
      name: "punctual_admission_batch_tasks",
      help: "Tasks admitted per admission batch",
      buckets: [0, 1, 5, 10, 50, 100, 250, 500],
      registers,
    });
    this.#storeErrors = new Counter({
      name: "punctual_store_errors_total",
      help: "Store calls of the coordinator that failed and are retried, by operation (tick, write)",
      labelNames: ["operation"],
      registers,
    });
    this.#replicasLost = new Counter({
      name: "punctual_replicas_lost_total",
      help: "Replicas this replica found silent past the liveness timeout and took work over from",
      registers,
    });
    this.#defects = new Counter({
      name: "punctual_task_defects_total",
      help: "Due tasks whose stored fields did not parse, taken out of the due set (once each)",
      registers,
    });
    this.#http = new Counter({
      name: "punctual_http_requests_total",
      help: "HTTP requests by method, route and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.#gauge(
      "punctual_launches_in_flight",
      "Runs this replica is launching or running in process (the claims it holds)",
      (s) => s.inFlight(),
    );
    this.#gauge(
      "punctual_budget_runs",
      "The global budget in force: runs launching or running across all replicas at most",
      (s) => s.budget(),
    );
    this.#gauge(
      "punctual_heartbeat_age_seconds",
      "Seconds since this replica last wrote its heartbeat (-1: not yet)",
      (s) => {
        const read = s.lastHeartbeatAt?.() ?? null;
        const heard = this.#lastHeartbeatAt;
        const at = read === null ? heard : heard === null ? read : Math.max(read, heard);
        return at === null ? -1 : Math.max(0, s.now() - at) / 1000;
      },
    );
    this.#queueGauges(registers);
    if (options.processMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry });
      // prom-client names these gauges `_total`, which promtool refuses for anything but a counter;
      // `nodejs_active_handles` (and the others without the suffix), by type, carry the same counts.
      for (const name of UNCHECKED_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
    }
  }

  /**
   * Counts what `events` reports: decisions, admission batches and claims, run status changes, tick
   * durations, heartbeats and store failures; `sources` are read at scrape time. Returns a function that
   * stops listening.
   */
  listenTo(events: SchedulerEvents, sources: MetricsSources): () => void {
    this.#sources = sources;
    const stops = [
      events.on("admission:decided", ({ taskId, admission }) => {
        this.#observeAdmission(taskId, admission);
      }),
      events.on("admission:batch", ({ tasks }) => {
        this.#batch.observe(tasks);
      }),
      events.on("coordinator:admission", ({ durationMs }) => {
        this.#admission.observe(durationMs / 1000);
      }),
      events.on("coordinator:claim", ({ durationMs }) => {
        this.#claim.observe(durationMs / 1000);
      }),
      events.on("run:claimed", ({ run, targetKind }) => {
        this.#countRun(run, targetKind);
      }),
      events.on("run:changed", ({ run, from, targetKind }) => {
        this.#observeRun(run, from, targetKind);
      }),
      events.on("coordinator:tick", ({ durationMs }) => {
        this.#tick.observe(durationMs / 1000);
      }),
      events.on("coordinator:heartbeat", ({ at }) => {
        this.#lastHeartbeatAt = at;
      }),
      events.on("task:defective", () => {
        this.#defects.inc();
      }),
      events.on("replica:lost", () => {
        this.#replicasLost.inc();
      }),
      events.on("store:failed", ({ operation }) => {
        this.#storeErrors.inc({ operation });
      }),
    ];
    return () => {
      for (const stop of stops) stop();
    };
  }

  /** The text a Prometheus scrape reads, and its content type. */
  async scrape(): Promise<{ readonly contentType: string; readonly body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  observeRequest(method: string, route: string, status: number): void {
    this.#http.inc({ method, route, status: String(status) });
  }

  /** A gauge read from the sources at scrape time (0 before `listenTo`). */
  #gauge(name: string, help: string, read: (sources: MetricsSources) => number): void {
    const gauge: Gauge = new Gauge({
      name,
      help,
      registers: [this.registry],
      collect: () => {
        gauge.set(this.#sources === null ? 0 : read(this.#sources));
      },
    });
  }

  /** The fleet's queue, read once per scrape by the first of its gauges. */
  #queueGauges(registers: Registry[]): void {
    let reading: Promise<QueueStats | null> | null = null;
    const read = (): Promise<QueueStats | null> => {
      const sources = this.#sources;
      if (sources === null) return Promise.resolve(null);
      // One store read serves every queue gauge of one scrape: prom-client starts every collect of a
      // scrape before awaiting any, so they all join the read the first one started.
      reading ??= sources
        .queue()
        .catch(() => null)
        .finally(() => {
          reading = null;
        });
      return reading;
    };
    const up = new Gauge({
      name: "punctual_store_up",
      help: "1 when the last scrape could read the queue from the store, else 0",
      registers,
      collect: async () => {
        up.set((await read()) === null && this.#sources !== null ? 0 : 1);
      },
    });
    const fromQueue = (
      name: string,
      help: string,
      value: (q: QueueStats, now: number) => number,
    ): void => {
      const gauge: Gauge = new Gauge({
        name,
        help,
        registers,
        collect: async () => {
          const queue = await read();
          if (queue !== null && this.#sources !== null)
            gauge.set(value(queue, this.#sources.now()));
        },
      });
    };
    fromQueue(
      "punctual_queue_runs",
      "Runs queued across the fleet (due or waiting for their not_before)",
      (q) => q.queued,
    );
    fromQueue(
      "punctual_queue_oldest_ready_age_seconds",
      "Seconds the oldest queued run ready to launch has waited (0: none waiting)",
      (q, now) => (q.oldestReadyAt === null ? 0 : Math.max(0, now - q.oldestReadyAt) / 1000),
    );
    fromQueue(
      "punctual_active_runs",
      "Runs launching or running across the fleet (global budget slots in use)",
      (q) => q.active,
    );
  }

  /** The decisions one admission made for one task. */
  #observeAdmission(taskId: string, admission: Admission): void {
    for (const decision of admission.decisions) {
      const reason = decision.kind === "queue" ? decision.trigger : decision.reason;
      const labels: Record<string, string> = { kind: decision.kind, reason };
      if (this.#perTask) labels["task_id"] = taskId;
      this.#decisions.inc(labels, decision.kind === "miss" ? Math.max(1, decision.count) : 1);
    }
  }

  #countRun(run: Run, targetKind: TargetKind): void {
    this.#runs.inc({ status: run.status, reason: run.reason ?? "", target_kind: targetKind });
  }

  /** A run status change this replica recorded; a launch (launching -> running) has a lateness. */
  #observeRun(run: Run, before: RunStatus, targetKind: TargetKind): void {
    this.#countRun(run, targetKind);
    if (before === "launching" && run.status === "running" && run.latenessMs !== null) {
      this.#lateness.observe({ target_kind: targetKind }, Math.max(0, run.latenessMs) / 1000);
    }
  }
}
