/* global setTimeout, clearTimeout -- Node globals in a plain ES module */
/**
 * A deterministic graph for the real LangGraph JS server (test/e2e/langgraph-js.test.ts): no model, no
 * network. Each run appends its `label` to the thread's `log` (so a test can count how often the graph
 * ran on a thread) after waiting `sleep_ms`, a wait that ends early when the server cancels the run.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  label: Annotation({ reducer: (_old, next) => next, default: () => "" }),
  sleep_ms: Annotation({ reducer: (_old, next) => next, default: () => 0 }),
  log: Annotation({ reducer: (old, next) => [...old, ...next], default: () => [] }),
});

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    });
  });
}

async function work(state, config) {
  await pause(Number(state.sleep_ms) || 0, config?.signal);
  return { log: [state.label] };
}

export const graph = new StateGraph(State)
  .addNode("work", work)
  .addEdge(START, "work")
  .addEdge("work", END)
  .compile();
