/**
 * The CLI's HTTP client of the API (`punctual tasks|runs ...`): bearer token, JSON in and out, problem
 * documents turned into one-line errors with the exit code of SPEC 7.3 (2 for a refused request, 1 for
 * anything else).
 */
export interface ApiConnection {
  readonly server: string;
  readonly token: string | undefined;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/** A request the API refused (4xx, 5xx): carries the problem's text and the exit code. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  /** 2 when the request itself was refused as invalid, 1 otherwise. */
  readonly exitCode: number;

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.exitCode = status === 400 || status === 422 || status === 428 ? 2 : 1;
  }
}

function describeProblem(status: number, body: unknown): string {
  if (typeof body === "object" && body !== null) {
    const p = body as { title?: unknown; detail?: unknown; errors?: unknown };
    const errors = Array.isArray(p.errors)
      ? (p.errors as { field?: unknown; message?: unknown }[])
          .map((e) => `${String(e.field)}: ${String(e.message)}`)
          .join("; ")
      : "";
    const detail = typeof p.detail === "string" ? p.detail : "";
    const title = typeof p.title === "string" ? p.title : `HTTP ${status}`;
    return `${title} (${status})${errors !== "" ? `: ${errors}` : detail !== "" ? `: ${detail}` : ""}`;
  }
  return `HTTP ${status}`;
}

export async function callApi(
  connection: ApiConnection,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (connection.token !== undefined) headers["authorization"] = `Bearer ${connection.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(new URL(path, connection.server), {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch (error) {
    throw new Error(
      `cannot reach ${connection.server}: ${error instanceof Error ? error.message : String(error)}` +
        " (is `punctual serve` running? set --server or PUNCTUAL_URL)",
      { cause: error },
    );
  }
  const text = await response.text();
  let body: unknown = null;
  if (text !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.status >= 400)
    throw new ApiError(response.status, describeProblem(response.status, body));
  return { status: response.status, headers: response.headers, body };
}
