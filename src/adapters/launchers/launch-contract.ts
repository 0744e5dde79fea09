/**
 * What every launcher lets escape (docs/semantics.md#launch): exactly the three launch errors. Anything else thrown
 * while launching may have started the run, so it becomes an uncertain launch, keeping the original as
 * `cause`.
 */
import { isPunctualError, LaunchIndeterminateError } from "../../domain/errors.js";

/** `error` if it is one of the three launch errors, else an indeterminate launch caused by it. */
export function launchContractError(error: unknown, launcher: string): unknown {
  if (isPunctualError(error)) {
    switch (error.code) {
      case "thread_busy":
      case "launch_failed":
      case "launch_indeterminate":
        return error;
      default:
        break;
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new LaunchIndeterminateError(`the ${launcher} launcher failed unexpectedly: ${message}`, {
    cause: error,
  });
}
