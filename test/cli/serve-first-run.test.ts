import { describe, expect, it } from "vitest";
import { firstRunMessage } from "../../src/cli/serve-command.js";

describe("serve's first-run message", () => {
  const message = firstRunMessage("http://127.0.0.1:8080", "pct_secret");

  it("shows the token once, with a curl that uses it", () => {
    expect(message).toContain("export PUNCTUAL_TOKEN=pct_secret");
    expect(message).toContain('-H "Authorization: Bearer pct_secret"');
    expect(message).toContain("curl -sS -X POST http://127.0.0.1:8080/v1/tasks");
  });

  it("says where the dashboard and the API docs are", () => {
    expect(message).toContain("Dashboard: http://127.0.0.1:8080/ ");
    expect(message).toContain("API docs: http://127.0.0.1:8080/docs");
  });
});
