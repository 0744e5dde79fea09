/** What every group of contract cases receives: the store opened for the current test. */
import type { Store } from "../../../src/application/store.js";

export interface ContractContext {
  /** The fresh, empty, migrated store of the running test. */
  readonly store: () => Store;
}
