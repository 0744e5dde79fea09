/**
 * The launcher contract for `handler` targets: in-process functions. A handler cannot be busy, uncertain
 * or unreachable, and always runs on the requested thread; those scenarios are not registered for it.
 */
import { HandlerLauncher } from "../../src/adapters/launchers/handler/handler-launcher.js";
import { buildRun, buildTask, claimed } from "../domain/builders.js";
import { describeLauncherContract } from "./launcher-contract.js";
import type { ContractRequest } from "./launcher-contract.js";

function handlerRequest(name: string): ContractRequest {
  const run = claimed(buildRun());
  return {
    run,
    task: buildTask({ target: { kind: "handler", name, input: { n: 1 } } }),
    targetRunId: run.id,
  };
}

describeLauncherContract("handler", ["succeeds", "hangs", "refused"], () => {
  const launcher = new HandlerLauncher({
    ok: () => ({ ok: true }),
    slow: ({ signal }) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          reject(new Error("aborted"));
        });
      }),
  });
  launcher.connect({
    completed: () => Promise.resolve(),
    lost: () => Promise.resolve(),
    heartbeat: () => Promise.resolve(),
  });
  return Promise.resolve({
    launcher,
    request: (scenario) => {
      switch (scenario) {
        case "succeeds":
          return handlerRequest("ok");
        case "hangs":
          // The launch itself returns at once; the handler runs on until its signal aborts.
          return handlerRequest("slow");
        case "refused":
          return handlerRequest("not-registered");
        case "busy":
        case "uncertain":
        case "unreachable":
        case "other_thread":
          return null;
      }
    },
    close: async () => {
      launcher.abandon();
      await launcher.settled();
    },
  });
});
