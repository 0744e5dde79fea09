/**
 * The coordinator's use cases (docs/semantics.md#the-life-of-an-occurrence, docs/architecture.md#cadence),
 * built together over one store: admit due occurrences, claim, record run writes, recover, find the next
 * wake-up, and the budget in force they all read. The runtime hands each of its parts only the one or
 * two it uses; every decision is a domain call run inside the store's transaction
 * (docs/architecture.md#where-each-decision-lives).
 */
import type { SchedulePolicy } from "../../domain/options.js";
import type { ReplicaRegistry } from "../../domain/ports/replica-registry.js";
import type { Store } from "../../domain/ports/store.js";
import type { EventSink } from "../events/internal-events.js";
import type { AdmissionWindow } from "../policy/admission-window.js";
import type { Quotas } from "../policy/quotas.js";
import { AdmitDue } from "./admit-due.js";
import { BudgetHolder } from "./budget-holder.js";
import { ClaimRuns } from "./claim-runs.js";
import { NextWakeUp } from "./next-wake-up.js";
import { RecoverySweeps } from "./recovery-sweeps.js";
import { RunWrites } from "./run-writes.js";

export interface DispatchDeps {
  readonly store: Store;
  readonly policy: SchedulePolicy;
  /** Receives admissions, claims and run status changes. @default none */
  readonly events?: EventSink;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
  /** What this replica admitted per owner in the last minute, shared with manual triggers. */
  readonly admissions?: AdmissionWindow;
}

/** The dispatch use cases, one store under them all. */
export interface Dispatch {
  readonly budget: BudgetHolder;
  readonly admission: AdmitDue;
  readonly claims: ClaimRuns;
  readonly runWrites: RunWrites;
  readonly recovery: RecoverySweeps;
  readonly wakeUps: NextWakeUp;
  /** Where this replica's heartbeat is written. */
  readonly replicas: ReplicaRegistry;
}

export function createDispatch(deps: DispatchDeps): Dispatch {
  const { store } = deps;
  const events = deps.events === undefined ? {} : { events: deps.events };
  const budget = new BudgetHolder(store, deps.policy);
  return {
    budget,
    admission: new AdmitDue({
      tasks: store.tasks,
      ...events,
      ...(deps.quotas === undefined ? {} : { quotas: deps.quotas }),
      ...(deps.admissions === undefined ? {} : { admissions: deps.admissions }),
    }),
    claims: new ClaimRuns({ runs: store.runs, budget, ...events }),
    runWrites: new RunWrites({ store, runs: store.runs, tasks: store.tasks, budget, ...events }),
    recovery: new RecoverySweeps({ runs: store.runs, replicas: store.replicas, budget, ...events }),
    wakeUps: new NextWakeUp({ tasks: store.tasks, runs: store.runs }),
    replicas: store.replicas,
  };
}
