/** `--pg-pooler` and `--listen-url` (docs/operations.md#pgbouncer): flags over environment, bad values refused. */
import { describe, expect, it } from "vitest";
import { poolerSettingsOf } from "../../src/cli/cli-options.js";

const usage = (message: string): Error => new Error(message);

describe("poolerSettingsOf", () => {
  it("reads nothing when neither the flags nor the environment say anything", () => {
    expect(poolerSettingsOf({}, {}, usage)).toEqual({});
  });

  it("takes the flags over the environment", () => {
    const env = {
      PUNCTUAL_PG_POOLER: "none",
      PUNCTUAL_LISTEN_URL: "postgres://env@db/punctual",
    };
    expect(poolerSettingsOf({}, env, usage)).toEqual({
      pooler: "none",
      listenUrl: "postgres://env@db/punctual",
    });
    expect(
      poolerSettingsOf(
        { pgPooler: "transaction", listenUrl: "postgresql://flag@db/punctual" },
        env,
        usage,
      ),
    ).toEqual({ pooler: "transaction", listenUrl: "postgresql://flag@db/punctual" });
  });

  it("refuses an unknown pooler mode and a listen URL that is not PostgreSQL's", () => {
    expect(() => poolerSettingsOf({ pgPooler: "session" }, {}, usage)).toThrow(
      /--pg-pooler must be one of none, transaction/,
    );
    expect(() =>
      poolerSettingsOf({}, { PUNCTUAL_LISTEN_URL: "http://user:secret@db" }, usage),
    ).toThrow(/--listen-url must be a postgres:\/\/ URL/);
    expect(() =>
      poolerSettingsOf({}, { PUNCTUAL_LISTEN_URL: "http://user:secret@db" }, usage),
    ).not.toThrow(/secret/);
  });

  it("reads the connection and statement timeouts, 0 turning the statement timeout off", () => {
    expect(
      poolerSettingsOf(
        { pgStatementTimeout: "2s" },
        { PUNCTUAL_PG_CONNECT_TIMEOUT: "500ms", PUNCTUAL_PG_STATEMENT_TIMEOUT: "PT5M" },
        usage,
      ),
    ).toEqual({ connectTimeoutMs: 500, statementTimeoutMs: 2000 });
    expect(poolerSettingsOf({ pgStatementTimeout: "0" }, {}, usage)).toEqual({
      statementTimeoutMs: 0,
    });
    expect(() => poolerSettingsOf({ pgConnectTimeout: "soon" }, {}, usage)).toThrow(
      /--pg-connect-timeout/,
    );
  });
});
