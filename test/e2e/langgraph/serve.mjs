/* global process, console, URL -- Node globals in a plain ES module */
/**
 * Starts the open-source LangGraph JS server (`@langchain/langgraph-api`, what `langgraphjs dev` runs)
 * with the graph beside this file, on 127.0.0.1:PORT, keeping its state in the working directory.
 * `node serve.mjs PORT`; prints `READY` once it listens. Tracing and analytics are off in the caller's
 * environment (LANGSMITH_TRACING=false, ...), so nothing leaves the machine.
 */
import { fileURLToPath } from "node:url";
import { startServer } from "@langchain/langgraph-api/server";

const port = Number(process.argv[2]);
const graph = fileURLToPath(new URL("./graph.mjs", import.meta.url));
await startServer({
  port,
  nWorkers: 4,
  host: "127.0.0.1",
  cwd: process.cwd(),
  graphs: { echo: `${graph}:graph` },
});
console.log("READY");
