/**
 * `punctual token create|list|revoke` (docs/security.md): manages API tokens directly in the database. A token is
 * printed once, when it is created; only its hash is stored.
 */
import { Command, CommanderError } from "commander";
import { openTokenAdmin, storeFromDatabaseUrl } from "../composition-stores.js";
import { ValidationError } from "../domain/errors.js";
import type { Instant } from "../domain/time.js";
import { databaseUrlOf } from "./cli-options.js";
import { table } from "./text-table.js";

export interface TokenIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const processIo: TokenIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

const DATABASE_HELP =
  "a SQLite file path or sqlite: URL, or a postgres:// URL (default: $PUNCTUAL_DATABASE_URL, else ./punctual.db)";

async function withTokens<T>(
  database: string | undefined,
  io: TokenIo,
  fn: (tokens: Awaited<ReturnType<typeof openTokenAdmin>>["tokens"]) => Promise<T>,
): Promise<T> {
  const admin = await openTokenAdmin(storeFromDatabaseUrl(databaseUrlOf(database, io.env)));
  try {
    return await fn(admin.tokens);
  } catch (error) {
    if (error instanceof ValidationError) {
      io.stderr(`punctual token: ${error.message}\n`);
      throw new CommanderError(2, "punctual.invalidInput", error.message);
    }
    throw error;
  } finally {
    await admin.close();
  }
}

function iso(at: number | null): string {
  return at === null ? "-" : new Date(at).toISOString().replace(".000Z", "Z");
}

export function tokenCommand(io: TokenIo = processIo): Command {
  const token = new Command("token").description("create, list and revoke API tokens");
  token
    .command("create")
    .description("create a token for an owner and print it (once)")
    .requiredOption("--owner <name>", "the owner whose tasks the token reads and writes")
    .option("--admin", "the token sees every owner's tasks")
    .option("--label <text>", "a note to recognise the token by")
    .option("--database <url>", DATABASE_HELP)
    .option("--json", "print JSON")
    .exitOverride()
    .action(
      async (opts: {
        owner: string;
        admin?: boolean;
        label?: string;
        database?: string;
        json?: boolean;
      }) => {
        const { token: made, secret } = await withTokens(opts.database, io, (tokens) =>
          tokens.create(
            { owner: opts.owner, admin: opts.admin ?? false, label: opts.label ?? null },
            Date.now() as Instant,
          ),
        );
        if (opts.json === true) {
          io.stdout(
            `${JSON.stringify({ id: made.id, owner: made.owner, admin: made.admin, token: secret })}\n`,
          );
        } else {
          io.stdout(
            `${secret}\n` +
              `(token ${made.id} for owner ${made.owner}${made.admin ? ", admin" : ""}: shown only once)\n`,
          );
        }
      },
    );
  token
    .command("list")
    .description("list tokens (never their secrets)")
    .option("--database <url>", DATABASE_HELP)
    .option("--json", "print JSON")
    .exitOverride()
    .action(async (opts: { database?: string; json?: boolean }) => {
      const list = await withTokens(opts.database, io, (tokens) => tokens.list());
      if (opts.json === true) {
        io.stdout(
          `${JSON.stringify(
            list.map((t) => ({
              id: t.id,
              owner: t.owner,
              admin: t.admin,
              label: t.label,
              created_at: iso(t.createdAt),
              revoked_at: t.revokedAt === null ? null : iso(t.revokedAt),
            })),
          )}\n`,
        );
        return;
      }
      const rows = list.map((t) => [
        t.id,
        t.owner,
        t.admin ? "yes" : "",
        t.label ?? "",
        iso(t.createdAt),
        t.revokedAt === null ? "" : iso(t.revokedAt),
      ]);
      io.stdout(table(["ID", "OWNER", "ADMIN", "LABEL", "CREATED", "REVOKED"], rows));
    });
  token
    .command("revoke")
    .description("revoke a token by id")
    .argument("<id>", "the token's id (see `token list`)")
    .option("--database <url>", DATABASE_HELP)
    .exitOverride()
    .action(async (id: string, opts: { database?: string }) => {
      try {
        await withTokens(opts.database, io, (tokens) => tokens.revoke(id, Date.now() as Instant));
      } catch (error) {
        if (error instanceof Error && "code" in error && error.code === "not_found") {
          throw new Error(`token revoke: no active token ${id}`, { cause: error });
        }
        throw error;
      }
      io.stdout(`revoked ${id}\n`);
    });
  return token;
}
