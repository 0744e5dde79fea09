/**
 * Application modules judged by what they promise (issue 36 item 7): the library's notifications as a
 * listener sees them, the scheduler's internal events, API tokens, the per-minute admission window and
 * the handler names the fleet registered.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { MemoryTokenRepository } from "../../src/adapters/storage/memory/memory-token-repository.js";
import { TokenService } from "../../src/application/access/token-service.js";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import type { SchedulerEventName as InternalEventName } from "../../src/application/events/internal-events.js";
import { LibraryEvents } from "../../src/application/events/library-notifications.js";
import type { SchedulerEventName } from "../../src/application/events/library-notifications.js";
import { AdmissionWindow } from "../../src/application/policy/admission-window.js";
import { registeredHandlerNames } from "../../src/application/tasks/registered-handler-names.js";
import type { Admission } from "../../src/domain/admission.js";
import { NotFoundError, ValidationError } from "../../src/domain/errors.js";
import { ownerId, taskId } from "../../src/domain/ids.js";
import type { Run } from "../../src/domain/run.js";
import { instant } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";
import { buildRun, buildTask } from "../domain/builders.js";

const T0: Instant = instant(Date.UTC(2030, 0, 7, 9, 0, 0));
const at = (ms: number): Instant => instant(T0 + ms);

function aRun(fields: Partial<Run>): Run {
  return buildRun({ scheduledFor: T0, ...fields });
}

describe("LibraryEvents over the scheduler's internal events", () => {
  function wired(): {
    internal: SchedulerEvents;
    library: LibraryEvents;
    errors: [unknown, SchedulerEventName][];
    seen: [string, unknown][];
  } {
    const errors: [unknown, SchedulerEventName][] = [];
    const internal = new SchedulerEvents();
    const library = new LibraryEvents((error, event) => errors.push([error, event]));
    library.connect(internal);
    const seen: [string, unknown][] = [];
    for (const name of [
      "run:launched",
      "run:succeeded",
      "run:failed",
      "run:retrying",
      "run:timed_out",
      "run:cancelled",
      "occurrence:skipped",
      "occurrence:missed",
      "task:defective",
      "replica:lost",
    ] as const) {
      library.on(name, (payload) => {
        seen.push([name, payload]);
      });
    }
    return { internal, library, errors, seen };
  }

  it("names each status change once, and none when the status did not change", () => {
    const { internal, seen } = wired();
    const change = (status: Run["status"], from: Run["status"], reason: Run["reason"] = null) => {
      internal.emit("run:changed", {
        run: aRun({ status, reason }),
        from,
        targetKind: "handler",
      });
    };
    change("running", "launching");
    change("queued", "running");
    change("succeeded", "running");
    change("failed", "running");
    change("timed_out", "running");
    change("cancelled", "queued");
    change("running", "running");
    change("launching", "queued"); // a claim is not a notification
    change("skipped", "queued", "queue_timeout");
    change("skipped", "queued");
    expect(seen.map(([name]) => name)).toEqual([
      "run:launched",
      "run:retrying",
      "run:succeeded",
      "run:failed",
      "run:timed_out",
      "run:cancelled",
      "occurrence:skipped",
      "occurrence:skipped",
    ]);
    expect(seen[0]?.[1]).toMatchObject({ run: { id: "run-1", status: "running" } });
    expect(seen[6]?.[1]).toEqual({
      task_id: "task-1",
      scheduled_for: "2030-01-07T09:00:00Z",
      until: "2030-01-07T09:00:00Z",
      count: 1,
      reason: "queue_timeout",
    });
    expect(seen[7]?.[1]).toMatchObject({ reason: "skipped" });
  });

  it("reports skipped, missed and excluded occurrences of an admission, and not the queued ones", () => {
    const { internal, seen } = wired();
    const admission = {
      decisions: [
        { kind: "queue", scheduledFor: T0, fireAt: T0 },
        { kind: "skip", scheduledFor: at(60_000), reason: "overlap" },
        { kind: "miss", from: at(120_000), until: at(240_000), count: 3, reason: "catch_up" },
        { kind: "exclude", from: at(300_000), until: at(300_000), count: 1, reason: "excluded" },
      ],
    } as unknown as Admission;
    internal.emit("admission:decided", { taskId: taskId("task-1"), admission });
    expect(seen).toEqual([
      [
        "occurrence:skipped",
        {
          task_id: "task-1",
          scheduled_for: "2030-01-07T09:01:00Z",
          until: "2030-01-07T09:01:00Z",
          count: 1,
          reason: "overlap",
        },
      ],
      [
        "occurrence:missed",
        {
          task_id: "task-1",
          scheduled_for: "2030-01-07T09:02:00Z",
          until: "2030-01-07T09:04:00Z",
          count: 3,
          reason: "catch_up",
        },
      ],
      [
        "occurrence:skipped",
        {
          task_id: "task-1",
          scheduled_for: "2030-01-07T09:05:00Z",
          until: "2030-01-07T09:05:00Z",
          count: 1,
          reason: "excluded",
        },
      ],
    ]);
  });

  it("reports a lost replica and a defective task in the library's names", () => {
    const { internal, seen } = wired();
    internal.emit("replica:lost", { replicaId: "replica-b", claims: 2, runs: 1 });
    internal.emit("task:defective", { task: buildTask({ id: taskId("task-9") }) });
    expect(seen[0]).toEqual(["replica:lost", { replica_id: "replica-b", claims: 2, runs: 1 }]);
    expect(seen[1]?.[0]).toBe("task:defective");
    // A task with no recorded defect still names the event's task, with an empty defect.
    expect(seen[1]?.[1]).toEqual({ task_id: "task-9", defect: { detected_at: null, fields: [] } });
  });

  it("keeps calling the other listeners when one throws or rejects, and reports both errors", async () => {
    const { internal, library, errors } = wired();
    const calls: string[] = [];
    library.on("replica:lost", () => {
      throw new Error("sync boom");
    });
    library.on("replica:lost", () => Promise.reject(new Error("async boom")));
    library.on("replica:lost", () => {
      calls.push("after");
    });
    expect(() => {
      internal.emit("replica:lost", { replicaId: "r", claims: 0, runs: 1 });
    }).not.toThrow();
    expect(calls).toEqual(["after"]);
    await Promise.resolve();
    await Promise.resolve();
    expect(errors.map(([error, event]) => [(error as Error).message, event])).toEqual([
      ["sync boom", "replica:lost"],
      ["async boom", "replica:lost"],
    ]);
  });

  it("stops calling a listener once it is removed, and builds no payload nobody listens to", () => {
    const internal = new SchedulerEvents();
    const errors: unknown[] = [];
    const library = new LibraryEvents((error) => errors.push(error));
    library.connect(internal);
    const seen: unknown[] = [];
    const off = library.on("run:succeeded", (payload) => seen.push(payload));
    internal.emit("run:changed", {
      run: aRun({ status: "succeeded" }),
      from: "running",
      targetKind: "handler",
    });
    off();
    internal.emit("run:changed", {
      run: aRun({ status: "succeeded" }),
      from: "running",
      targetKind: "handler",
    });
    expect(seen).toHaveLength(1);
    // With no listener, a run that could not be viewed is never viewed: nothing throws, nothing is reported.
    internal.emit("run:changed", {
      run: aRun({ status: "failed", scheduledFor: Number.NaN as Instant }),
      from: "running",
      targetKind: "handler",
    });
    expect(errors).toEqual([]);
  });

  it("reports a payload that cannot be built instead of throwing into the coordinator", () => {
    const { internal, errors, seen } = wired();
    expect(() => {
      internal.emit("run:changed", {
        run: aRun({ status: "failed", scheduledFor: Number.NaN as Instant }),
        from: "running",
        targetKind: "handler",
      });
    }).not.toThrow();
    expect(seen).toEqual([]);
    expect(errors.map(([, event]) => event)).toEqual(["run:failed"]);
  });
});

describe("SchedulerEvents", () => {
  it("calls listeners in the order they were added, isolates a throwing one, and removes on demand", () => {
    const errors: [unknown, InternalEventName][] = [];
    const events = new SchedulerEvents({
      onListenerError: (error, event) => errors.push([error, event]),
    });
    const calls: string[] = [];
    events.on("coordinator:tick", () => calls.push("first"));
    events.on("coordinator:tick", () => {
      throw new Error("listener bug");
    });
    const off = events.on("coordinator:tick", ({ durationMs }) =>
      calls.push(`third ${durationMs}`),
    );
    events.emit("coordinator:tick", { durationMs: 5 });
    off();
    events.emit("coordinator:tick", { durationMs: 6 });
    expect(calls).toEqual(["first", "third 5", "first"]);
    expect(errors.map(([error, event]) => [(error as Error).message, event])).toEqual([
      ["listener bug", "coordinator:tick"],
      ["listener bug", "coordinator:tick"],
    ]);
  });

  it("swallows a listener's error when no error callback was given", () => {
    const events = new SchedulerEvents();
    events.on("store:failed", () => {
      throw new Error("ignored");
    });
    expect(() => {
      events.emit("store:failed", { operation: "tick" });
    }).not.toThrow();
  });
});

describe("TokenService", () => {
  function service(): { tokens: TokenService; repository: MemoryTokenRepository } {
    let n = 0;
    const repository = new MemoryTokenRepository();
    const tokens = new TokenService({
      tokens: repository,
      newSecret: () => `pct_secret-${++n}`,
      hash: (secret) => `hash(${secret})`,
      newId: () => `tok-${n}`,
    });
    return { tokens, repository };
  }

  it("makes a token whose secret authenticates as its owner, stored only as a hash", async () => {
    const { tokens, repository } = service();
    const { token, secret } = await tokens.create({ owner: "alice@example.com", label: "ci" }, T0);
    expect(token).toEqual({
      id: "tok-1",
      owner: "alice@example.com",
      admin: false,
      label: "ci",
      createdAt: T0,
      revokedAt: null,
    });
    expect(await repository.findTokenByHash(secret)).toBeNull();
    expect(await tokens.authenticate(secret)).toEqual({
      token,
      actor: { owner: "alice@example.com", admin: false },
    });
    const admin = await tokens.create({ owner: "root", admin: true }, T0);
    expect(admin.token.label).toBeNull();
    expect((await tokens.authenticate(admin.secret))?.actor).toEqual({
      owner: "root",
      admin: true,
    });
    expect((await tokens.list()).map((t) => t.id)).toEqual(["tok-1", "tok-2"]);
  });

  it("refuses a malformed owner and an over-long label, storing nothing", async () => {
    const { tokens } = service();
    for (const owner of ["", "has space", "x".repeat(129), "semi;colon"]) {
      await expect(tokens.create({ owner }, T0)).rejects.toBeInstanceOf(ValidationError);
    }
    await expect(tokens.create({ owner: "x".repeat(128) }, T0)).resolves.toBeDefined();
    const long = tokens.create({ owner: "alice", label: "l".repeat(201) }, T0);
    await expect(long).rejects.toMatchObject({ errors: [{ field: "label" }] });
    await expect(
      tokens.create({ owner: "alice", label: "l".repeat(200) }, T0),
    ).resolves.toBeDefined();
    expect(await tokens.list()).toHaveLength(2);
  });

  it("authenticates no empty, over-long, unknown or revoked secret", async () => {
    const { tokens } = service();
    expect(await tokens.hasActiveToken()).toBe(false);
    const { token, secret } = await tokens.create({ owner: "alice" }, T0);
    expect(await tokens.hasActiveToken()).toBe(true);
    expect(await tokens.authenticate("")).toBeNull();
    expect(await tokens.authenticate("x".repeat(513))).toBeNull();
    expect(await tokens.authenticate("pct_unknown")).toBeNull();
    await tokens.revoke(token.id, at(1000));
    expect(await tokens.authenticate(secret)).toBeNull();
    expect(await tokens.hasActiveToken()).toBe(false);
    await expect(tokens.revoke(token.id, at(2000))).rejects.toBeInstanceOf(NotFoundError);
    await expect(tokens.revoke("tok-unknown", at(2000))).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("AdmissionWindow", () => {
  const alice = ownerId("alice");
  const bob = ownerId("bob");

  it("counts an owner's runs of the last minute, forgetting those a minute old", () => {
    const window = new AdmissionWindow();
    expect(window.count(alice, T0)).toBe(0);
    window.add(alice, T0, 3);
    window.add(alice, at(500), 2); // the same one-second bucket
    window.add(alice, at(30_000), 4);
    window.add(bob, at(30_000), 7);
    window.add(alice, at(31_000), 0); // nothing admitted, nothing counted
    expect(window.count(alice, at(59_999))).toBe(9);
    expect(window.count(bob, at(59_999))).toBe(7);
    // The bucket starting at T0 is a minute old at T0 + 60 s.
    expect(window.count(alice, at(60_000))).toBe(4);
    expect(window.count(alice, at(90_000))).toBe(0);
    // Forgotten buckets stay forgotten even if asked about an earlier time afterwards.
    expect(window.count(alice, at(30_000))).toBe(0);
  });

  it("gives back runs a failed trigger did not make, never below zero and never another bucket's", () => {
    const window = new AdmissionWindow();
    window.add(alice, at(1_000), 5);
    window.release(alice, at(1_400), 2);
    expect(window.count(alice, at(2_000))).toBe(3);
    window.release(alice, at(1_000), 10);
    expect(window.count(alice, at(2_000))).toBe(0);
    window.add(alice, at(1_000), 1);
    window.release(alice, at(5_000), 1); // another bucket: nothing held there
    window.release(bob, at(1_000), 1); // another owner
    expect(window.count(alice, at(2_000))).toBe(1);
  });
});

describe("registeredHandlerNames", () => {
  it("unites the names of replicas alive since the given time, ignoring silent ones", async () => {
    let n = 0;
    const { replicas } = createMemoryStore({ newId: () => `id-${++n}` });
    await replicas.heartbeat("a", T0, ["log", "report"]);
    await replicas.heartbeat("b", at(10_000), ["report", "mail"]);
    await replicas.heartbeat("c", at(10_000)); // an older version: no names registered
    await replicas.heartbeat("old", at(-60_000), ["gone"]);
    expect([...(await registeredHandlerNames(replicas, T0))].sort()).toEqual([
      "log",
      "mail",
      "report",
    ]);
    expect([...(await registeredHandlerNames(replicas, at(10_001)))]).toEqual([]);
  });
});
