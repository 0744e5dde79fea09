/**
 * `punctual apply FILE --group NAME [--owner NAME] [--prune pause|delete] [--dry-run]`
 * (docs/library.md#declared-schedules):
 * a file of declared schedules (JSON or YAML: a list of task definitions, each with its `key`, or an
 * object with `schedules`) synced into one group through the HTTP API, as `createScheduler({ schedules })`
 * syncs them at start. `--dry-run` prints the plan (create / update / unchanged / prune) and writes nothing.
 * The upserts go to the token's owner, and a prune touches that owner's tasks only (an admin token sees
 * every owner's); `--owner` names the owner the file is for, refused when the token writes as another.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { ValidationError } from "../domain/errors.js";
import {
  PRUNE_MODES,
  planLines,
  syncDeclaredSchedules,
} from "../application/tasks/declared-schedules.js";
import type {
  DeclaredSchedulesPlan,
  DeclaredSchedulesPort,
  PruneMode,
} from "../application/tasks/declared-schedules.js";
import type { TaskUpsertInput } from "../application/shapes/task-input.js";
import type { TaskView } from "../application/shapes/view-mappers.js";
import type { PunctualClient } from "../client/punctual-client.js";
import type { ClientCommandKit } from "./calendar-command.js";

/**
 * The definitions a file declares. @throws the usage error when it cannot be read or holds none. The
 * YAML parser is loaded only here: no other command of the program pays for it
 * (docs/benchmarks.md#start-cost).
 */
async function definitionsIn(path: string, usage: (message: string) => Error): Promise<unknown[]> {
  let value: unknown;
  try {
    const text = readFileSync(path, "utf8");
    // JSON is YAML too, but JSON.parse names JSON's own mistakes better.
    value = /\.json$/i.test(path) ? JSON.parse(text) : (await import("yaml")).parse(text);
  } catch (error) {
    throw usage(`cannot read ${path}: ${(error as Error).message}`);
  }
  const list = Array.isArray(value) ? value : (value as { schedules?: unknown } | null)?.schedules;
  if (!Array.isArray(list)) {
    throw usage(`${path} must hold a list of task definitions, or an object with "schedules"`);
  }
  return list as unknown[];
}

/** The sync over the HTTP client. */
function clientPort(client: PunctualClient): DeclaredSchedulesPort {
  return {
    owner: null,
    upsert: (input, dryRun) => client.tasks.upsert(input as TaskUpsertInput, { dryRun }),
    listGroup: async (group) => {
      const items: TaskView[] = [];
      for await (const page of client.tasks.pages({ group, limit: 200 })) items.push(...page.items);
      return items;
    },
    pause: (id) => client.tasks.pause(id),
    delete: (id) => client.tasks.delete(id, { afterRun: true }),
  };
}

function planText(plan: DeclaredSchedulesPlan): string {
  const owner = plan.owner === null ? "" : `, owner ${plan.owner}`;
  const head = `${plan.dry_run ? "plan (dry run, nothing written)" : "applied"} for group ${plan.group}${owner}:`;
  const lines =
    plan.steps.length === 0 ? ["(nothing declared, nothing to prune)"] : planLines(plan);
  return `${[head, ...lines.map((line) => `  ${line}`)].join("\n")}\n`;
}

interface ApplyOptions {
  readonly group: string;
  readonly owner?: string;
  readonly prune?: string;
  readonly dryRun?: boolean;
}

/** Builds `apply`. */
export function applyCommand(kit: ClientCommandKit): Command {
  const { act, globals, usage } = kit;
  return globals(
    new Command("apply")
      .description("sync a file of declared schedules (JSON or YAML) into a group")
      .argument("<file>")
      .requiredOption("--group <name>", "the group the declared tasks live in")
      .option(
        "--owner <name>",
        "the owner the file is for: refused unless the token writes as it; only its tasks are pruned",
      )
      .option("--prune <mode>", "what becomes of the group's undeclared tasks: pause or delete")
      .option("--dry-run", "print the plan and write nothing"),
  ).action(
    act(async (client, opts: ApplyOptions, [file = ""]) => {
      const prune = opts.prune;
      if (prune !== undefined && !(PRUNE_MODES as readonly string[]).includes(prune)) {
        throw usage("--prune must be pause or delete");
      }
      return syncDeclaredSchedules(
        clientPort(client),
        {
          schedules: await definitionsIn(file, usage),
          group: opts.group,
          prune: prune as PruneMode | undefined,
          owner: opts.owner,
        },
        { dryRun: opts.dryRun ?? false },
      ).catch((error: unknown) => {
        // The sync's own refusals (the owner, a key declared twice) are usage errors, as the server's are.
        if (!(error instanceof ValidationError)) throw error;
        throw usage(error.errors.map((e) => `${e.field}: ${e.message}`).join("; "));
      });
    }, planText),
  );
}
