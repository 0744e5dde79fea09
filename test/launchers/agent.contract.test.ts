/**
 * The launcher contract for `agent` targets against fake agent servers of each flavor: busy is a 409
 * (langgraph-api, DeerFlow) or the JS server's 422; an uncertain launch is a 5xx or a connection dropped
 * after the run was created. One fake server per behaviour, each configured as its own agent server.
 */
import { randomUUID } from "node:crypto";
import { AgentLauncher } from "../../src/adapters/launchers/agent/agent-launcher.js";
import { agentRun, agentTask, configFlavor, serverConfig } from "../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../helpers/fake-agent-server.js";
import type { FakeFlavor, FakeMode } from "../helpers/fake-agent-server.js";
import { closedPort } from "../helpers/webhook-receiver.js";
import { CONTRACT_SCENARIOS, describeLauncherContract } from "./launcher-contract.js";
import type { ContractRequest, ContractScenario } from "./launcher-contract.js";

const VARIANTS: readonly { flavor: FakeFlavor; uncertain: FakeMode; how: string }[] = [
  { flavor: "python", uncertain: { kind: "drop" }, how: "a dropped connection" },
  {
    flavor: "js",
    uncertain: { kind: "reply", status: 500, body: "Internal Server Error" },
    how: "a 500",
  },
  {
    flavor: "deerflow",
    uncertain: { kind: "reply", status: 503, body: { detail: "overloaded" } },
    how: "a 503",
  },
];

for (const { flavor, uncertain, how } of VARIANTS) {
  describeLauncherContract(
    `agent (${flavor}, uncertain by ${how})`,
    CONTRACT_SCENARIOS,
    async () => {
      const otherThread = randomUUID();
      const fakes = {
        main: await FakeAgentServer.start({ flavor }),
        uncertain: await FakeAgentServer.start({ flavor, mode: uncertain }),
        slow: await FakeAgentServer.start({ flavor, mode: { kind: "slow", ms: 60_000 } }),
        liar: await FakeAgentServer.start({
          flavor,
          mode: {
            kind: "reply",
            status: 200,
            body: { run_id: randomUUID(), thread_id: otherThread, status: "pending" },
          },
        }),
      };
      const dead = `http://127.0.0.1:${await closedPort()}`;
      const configured = configFlavor(flavor);
      const launcher = new AgentLauncher({
        servers: [
          ...Object.entries(fakes).map(([name, fake]) =>
            serverConfig(name, fake.url, { flavor: configured }),
          ),
          serverConfig("dead", dead, { flavor: configured }),
        ],
      });
      const on = (server: string): ContractRequest => {
        const task = agentTask({ server });
        return { run: agentRun(task), task };
      };
      const requests: Record<ContractScenario, () => ContractRequest> = {
        succeeds: () => on("main"),
        busy: () => {
          const threadId = randomUUID();
          fakes.main.keepBusy(threadId);
          const task = agentTask({ threadId });
          return { run: agentRun(task), task };
        },
        // langgraph servers refuse an unknown assistant (404); DeerFlow takes any, but only object input.
        refused: () => {
          const task =
            flavor === "deerflow"
              ? agentTask({ input: "not an object" })
              : agentTask({ assistantId: "no-such-assistant" });
          return { run: agentRun(task), task };
        },
        uncertain: () => on("uncertain"),
        unreachable: () => on("dead"),
        hangs: () => on("slow"),
        other_thread: () => ({ ...on("liar"), otherThread }),
      };
      return {
        launcher,
        request: (scenario) => requests[scenario](),
        close: async () => {
          await Promise.all(Object.values(fakes).map((fake) => fake.close()));
        },
      };
    },
  );
}
