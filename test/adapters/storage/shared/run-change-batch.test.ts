/**
 * The fenced run-write protocol's decisions written once for every store
 * (src/adapters/storage/shared/run-change-batch.ts): the fence of one change and `changeRun`'s
 * read-check-decide. The stores' own behaviour is the contract suite's (test/contract/).
 */
import { describe, expect, it } from "vitest";
import { LeaseLostError, NotFoundError } from "../../../../src/domain/errors.js";
import type { FencingToken, RunId } from "../../../../src/domain/ids.js";
import type { Run } from "../../../../src/domain/run.js";
import type { RunChange } from "../../../../src/domain/run-change.js";
import {
  decideRunChange,
  fenceRefusal,
} from "../../../../src/adapters/storage/shared/run-change-batch.js";

const ID = "run-1" as RunId;
const TOKEN = "token-1" as FencingToken;
const RUN = { id: ID, status: "launching", claimToken: TOKEN } as unknown as Run;

describe("fenceRefusal", () => {
  it("refuses a missing run (not_found) and a token no longer the run's (lease_lost)", () => {
    expect(fenceRefusal(ID, undefined, TOKEN)).toBeInstanceOf(NotFoundError);
    expect(fenceRefusal(ID, RUN, "other" as FencingToken)).toBeInstanceOf(LeaseLostError);
  });

  it("lets the run's own token, or no token, through", () => {
    expect(fenceRefusal(ID, RUN, TOKEN)).toBeNull();
    expect(fenceRefusal(ID, RUN, undefined)).toBeNull();
  });
});

describe("decideRunChange", () => {
  const running = (run: Run): RunChange => ({ run: { ...run, status: "running" } });

  it("throws the fence's refusal before reading the task or deciding", () => {
    const read: string[] = [];
    const taskOf = (): string => {
      read.push("task");
      return "task";
    };
    expect(() => decideRunChange(ID, undefined, undefined, taskOf, running)).toThrow(NotFoundError);
    expect(() => decideRunChange(ID, RUN, "other" as FencingToken, taskOf, running)).toThrow(
      LeaseLostError,
    );
    expect(read).toEqual([]);
  });

  it("decides on the run and its task, keeping the run's id; null when nothing changes", () => {
    const decided = decideRunChange(
      ID,
      RUN,
      TOKEN,
      () => "task",
      (run) => ({ run: { ...run, id: "elsewhere" as RunId, status: "running" } }),
    );
    expect(decided?.before).toBe(RUN);
    expect(decided?.task).toBe("task");
    expect(decided?.change.run).toMatchObject({ id: ID, status: "running" });
    expect(
      decideRunChange(
        ID,
        RUN,
        TOKEN,
        () => "task",
        () => null,
      ),
    ).toBeNull();
  });
});
