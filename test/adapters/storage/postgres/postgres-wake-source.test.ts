/**
 * The PostgreSQL wake source says when a notification is only about runs (a slot freed, a run queued
 * again), so the coordinator claims instead of making a whole pass (docs/architecture.md#cadence).
 */
import { describe, expect, it } from "vitest";
import { PostgresWakeSource } from "../../../../src/adapters/storage/postgres/postgres-wake-source.js";
import type { WakeHint } from "../../../../src/domain/ports/store.js";

describe("PostgresWakeSource", () => {
  it("hints `runs` for run notifications and nothing for task ones", async () => {
    let notify: (payload: string) => void = () => undefined;
    const source = new PostgresWakeSource((_channel, onNotify) => {
      notify = onNotify;
      return Promise.resolve({ close: () => Promise.resolve() });
    }, "punctual_wake");
    const heard: (WakeHint | undefined)[] = [];
    const stop = await source.subscribe((hint) => heard.push(hint));
    notify("run:0190");
    notify("task:0190");
    notify("tasks:12");
    expect(heard).toEqual(["runs", undefined, undefined]);
    await stop();
  });

  it("hints `queued` with the sender's replica id, and announces through the store's notify", async () => {
    let notify: (payload: string) => void = () => undefined;
    const sent: [string, string][] = [];
    const source = new PostgresWakeSource(
      (_channel, onNotify) => {
        notify = onNotify;
        return Promise.resolve({ close: () => Promise.resolve() });
      },
      "punctual_wake",
      (channel, payload) => {
        sent.push([channel, payload]);
        return Promise.resolve();
      },
    );
    const heard: [WakeHint | undefined, string | undefined][] = [];
    const stop = await source.subscribe((hint, from) => heard.push([hint, from]));
    await source.announceQueued?.("replica:a");
    expect(sent).toEqual([["punctual_wake", "queued:replica:a"]]);
    notify(sent[0]![1]);
    expect(heard).toEqual([["queued", "replica:a"]]);
    await stop();
  });

  it("cannot announce without a way to notify", () => {
    const source = new PostgresWakeSource(
      () => Promise.resolve({ close: () => Promise.resolve() }),
      "punctual_wake",
    );
    expect(source.announceQueued).toBeUndefined();
  });
});
