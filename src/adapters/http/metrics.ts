/**
 * Prometheus metrics (`GET /metrics`, prom-client): what the scheduler decided and launched, how late,
 * how long a tick took, and the HTTP traffic. Each app has its own registry. The scheduler's numbers come
 * from its events (`listenTo`); per-task labels only behind `perTaskLabels`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { SchedulerEvents } from "../../application/scheduler-events.js";
import type { Admission } from "../../domain/admission.js";
import type { Run, RunStatus } from "../../domain/run.js";

export interface MetricsOptions {
  /** Label decisions with `task_id` (unbounded cardinality: off by default). */
  readonly perTaskLabels?: boolean;
  /** Process metrics (CPU, memory, event loop). @default true */
  readonly processMetrics?: boolean;
}

export class SchedulerMetrics {
  readonly registry = new Registry();
  readonly #perTask: boolean;
  readonly #decisions: Counter;
  readonly #runs: Counter;
  readonly #lateness: Histogram;
  readonly #tick: Histogram;
  readonly #batch: Histogram;
  readonly #http: Counter;
  readonly #defects: Counter;
  #budget: () => number = () => 0;

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
      help: "Run status changes recorded by this replica, by the status reached",
      labelNames: ["status"],
      registers,
    });
    this.#lateness = new Histogram({
      name: "punctual_launch_lateness_seconds",
      help: "How long after its fire time a run was claimed for launch",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
      registers,
    });
    this.#tick = new Histogram({
      name: "punctual_tick_duration_seconds",
      help: "Duration of one coordinator pass (admit, claim, sweep)",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.#batch = new Histogram({
      name: "punctual_admission_batch_tasks",
      help: "Tasks admitted per admission batch",
      buckets: [0, 1, 5, 10, 50, 100, 250, 500],
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
    new Gauge({
      name: "punctual_launches_in_flight",
      help: "Runs this replica is launching or running in process (its share of the budget)",
      registers,
      collect: () => {
        (this.registry.getSingleMetric("punctual_launches_in_flight") as Gauge).set(this.#budget());
      },
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Counts what `events` reports: decisions, admission batches, claims, run status changes and tick
   * durations; `inFlight` is read at scrape time. Returns a function that stops listening.
   */
  listenTo(events: SchedulerEvents, inFlight: () => number): () => void {
    this.#budget = inFlight;
    const stops = [
      events.on("admission:decided", ({ taskId, admission }) => {
        this.#observeAdmission(taskId, admission);
      }),
      events.on("task:defective", () => {
        this.#defects.inc();
      }),
      events.on("admission:batch", ({ tasks }) => {
        this.#batch.observe(tasks);
      }),
      events.on("run:claimed", ({ run }) => {
        this.#runs.inc({ status: run.status });
      }),
      events.on("run:changed", ({ run, from }) => {
        this.#observeRun(run, from);
      }),
      events.on("coordinator:tick", ({ durationMs }) => {
        this.#tick.observe(durationMs / 1000);
      }),
    ];
    return () => {
      for (const stop of stops) stop();
    };
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

  /** A run status change this replica recorded; a launch (launching -> running) has a lateness. */
  #observeRun(run: Run, before: RunStatus): void {
    this.#runs.inc({ status: run.status });
    if (before === "launching" && run.status === "running" && run.latenessMs !== null) {
      this.#lateness.observe(Math.max(0, run.latenessMs) / 1000);
    }
  }

  observeRequest(method: string, route: string, status: number): void {
    this.#http.inc({ method, route, status: String(status) });
  }
}
