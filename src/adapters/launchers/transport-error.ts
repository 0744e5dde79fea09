/**
 * The one "might the request have arrived?" failure of the HTTP launchers (agent, webhook): an exchange
 * that broke before a complete reply, and what it means for a launch (docs/semantics.md#launch). Nothing sent: the launch
 * certainly failed. Possibly received: the launch is uncertain and is never sent again blindly.
 */
import { LaunchFailedError, LaunchIndeterminateError } from "../../domain/errors.js";

/** The exchange broke before a complete reply; `mayHaveArrived` is false only when nothing was sent. */
export class TransportError extends Error {
  override readonly name = "TransportError";

  constructor(
    message: string,
    readonly mayHaveArrived: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A transport failure of a launch request as the launch error it stands for; other errors are returned
 * as they are. `where` names the destination in the message, e.g. `https://hooks.example.com`.
 */
export function launchErrorOfTransport(error: unknown, where: string): unknown {
  if (!(error instanceof TransportError)) return error;
  return error.mayHaveArrived
    ? new LaunchIndeterminateError(`${error.message} (${where} may have received the request)`, {
        cause: error,
      })
    : new LaunchFailedError(`${error.message} (${where}; nothing was sent)`, { cause: error });
}
