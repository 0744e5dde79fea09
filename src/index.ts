/**
 * punctual: a durable scheduler for TypeScript and Node.js. This module is the package's public API.
 *
 * @example
 * ```ts
 * import { nextOccurrences } from "punctual";
 * nextOccurrences({ type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" }, { after: new Date(), count: 3 });
 * ```
 */
export {
  ERROR_CODES,
  PunctualError,
  ValidationError,
  LimitExceededError,
  NotFoundError,
  StaleVersionError,
  ActiveRunError,
  TaskNotMutableError,
  IllegalTransitionError,
  LeaseLostError,
  ThreadBusyError,
  LaunchFailedError,
  LaunchIndeterminateError,
  isPunctualError,
} from "./domain/errors.js";
export type { ErrorCode, FieldError } from "./domain/errors.js";
