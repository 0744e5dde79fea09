/**
 * Runs the receiver: `WEBHOOK_SECRET` (and `WEBHOOK_SECRET_PREVIOUS` while rotating), `PORT`
 * (default 3000, 0 for any). Its "work" builds a small report from the run's input.
 */
import type { AddressInfo } from "node:net";
import { createReceiver } from "./receiver.js";

const secrets = [process.env["WEBHOOK_SECRET"], process.env["WEBHOOK_SECRET_PREVIOUS"]].filter(
  (secret): secret is string => secret !== undefined && secret !== "",
);
if (secrets.length === 0) {
  console.error("set WEBHOOK_SECRET to the secret punctual signs with (a task's webhook_secret)");
  process.exit(2);
}

const server = createReceiver({
  secrets,
  work: async (envelope) => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { report: envelope.input, for: envelope.occurrence.scheduled_for };
  },
});

server.listen(Number(process.env["PORT"] ?? 3000), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ event: "listening", url: `http://127.0.0.1:${port}/` }));
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    server.close();
  });
}
