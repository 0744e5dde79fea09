/**
 * Events are made only for someone listening (docs/architecture.md#events): the internal events say
 * whether an event has a listener now, and the library's notifications make nothing while nobody
 * listens to any of them, yet notify a listener added later.
 */
import { describe, expect, it } from "vitest";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import { LibraryEvents } from "../../src/application/events/library-notifications.js";
import { buildRun } from "../domain/builders.js";

describe("event listeners", () => {
  it("says whether an internal event is listened to, as listeners come and go", () => {
    const events = new SchedulerEvents();
    expect(events.listens("run:claimed")).toBe(false);
    const stop = events.on("run:claimed", () => undefined);
    expect(events.listens("run:claimed")).toBe(true);
    expect(events.listens("run:changed")).toBe(false);
    stop();
    expect(events.listens("run:claimed")).toBe(false);
  });

  it("notifies a library listener added after runs changed unheard, and none once it stops", () => {
    const events = new SchedulerEvents();
    const library = new LibraryEvents(() => undefined);
    library.connect(events);
    const running = buildRun({ status: "running" });
    events.emit("run:changed", { run: running, from: "launching", targetKind: "handler" });
    const heard: string[] = [];
    const listener = ({ run }: { run: { id: string } }) => {
      heard.push(run.id);
    };
    const stop = library.on("run:launched", listener);
    // The same listener twice is one listener: stopping it once leaves nobody listening.
    library.on("run:launched", listener);
    events.emit("run:changed", { run: running, from: "launching", targetKind: "handler" });
    expect(heard).toEqual([running.id]);
    stop();
    events.emit("run:changed", { run: running, from: "launching", targetKind: "handler" });
    expect(heard).toEqual([running.id]);
  });
});
