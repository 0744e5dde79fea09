/**
 * The mail port: what the reminder handler needs from a mail provider. Providers worth using dedupe by
 * an idempotency key (as transactional mail APIs do); `SqliteMailbox` stands in for one here, keeping
 * every delivered message in a table whose primary key is that key.
 */
import Database from "better-sqlite3";

export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly body: string;
  /** The punctual run's idempotency key: the same on every attempt of one reminder. */
  readonly idempotencyKey: string;
}

export interface MailPort {
  /** Delivers `mail` unless a mail with its idempotency key was delivered before (then `delivered: false`). */
  send(mail: Mail): Promise<{ readonly delivered: boolean }>;
}

export interface DeliveredMail extends Mail {
  readonly deliveredAt: string;
}

/** A mail provider in a SQLite file (or `:memory:`), deduplicating by idempotency key. */
export class SqliteMailbox implements MailPort {
  readonly #db: Database.Database;

  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.exec(`CREATE TABLE IF NOT EXISTS delivered (
      idempotency_key TEXT PRIMARY KEY,
      recipient TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, delivered_at TEXT NOT NULL)`);
  }

  send(mail: Mail): Promise<{ delivered: boolean }> {
    const inserted = this.#db
      .prepare(
        `INSERT INTO delivered (idempotency_key, recipient, subject, body, delivered_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
      )
      .run(mail.idempotencyKey, mail.to, mail.subject, mail.body, new Date().toISOString());
    return Promise.resolve({ delivered: inserted.changes === 1 });
  }

  /** Every delivered mail, oldest first. */
  delivered(): DeliveredMail[] {
    const rows = this.#db.prepare(`SELECT * FROM delivered ORDER BY rowid`).all() as Record<
      string,
      string
    >[];
    return rows.map((row) => ({
      idempotencyKey: String(row["idempotency_key"]),
      to: String(row["recipient"]),
      subject: String(row["subject"]),
      body: String(row["body"]),
      deliveredAt: String(row["delivered_at"]),
    }));
  }

  close(): void {
    this.#db.close();
  }
}
