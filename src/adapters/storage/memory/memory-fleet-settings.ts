/** `FleetSettings` in memory: the budget of the replicas sharing this one store object. */
import type { FleetSettings } from "../../../domain/ports/store.js";

export class MemoryFleetSettings implements FleetSettings {
  #budget: number | null = null;

  storedBudget(): Promise<number | null> {
    return Promise.resolve(this.#budget);
  }

  adoptBudget(budget: number): Promise<number> {
    this.#budget ??= budget;
    return Promise.resolve(this.#budget);
  }

  replaceBudget(budget: number): Promise<number | null> {
    const previous = this.#budget;
    this.#budget = budget;
    return Promise.resolve(previous);
  }
}
