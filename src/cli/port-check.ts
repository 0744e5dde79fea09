/**
 * Whether `serve` can listen where it was asked, checked before the database is opened
 * (docs/operations.md#starting-replicas): a busy port then leaves no database file or migration behind. The
 * port is bound and released at once, so another process may still take it before `serve` listens;
 * that rarer case fails at listen, after the database was opened.
 */
import { createServer } from "node:net";

/** Null when `host:port` can be bound now; else the reason (`EADDRINUSE`, `EACCES`, ...). */
export function portRefusal(host: string, port: number): Promise<string | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? error.message);
    });
    probe.listen({ host, port, exclusive: true }, () => {
      probe.close(() => {
        resolve(null);
      });
    });
  });
}
