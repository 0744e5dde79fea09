/** Where the school keeps its enrollments: a SQLite file of its own (or `:memory:`), beside punctual's store. */
import Database from "better-sqlite3";
import type { Enrollment, EnrollmentStatus } from "../domain/enrollment.js";

export class EnrollmentRepository {
  readonly #db: Database.Database;

  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS enrollment (id TEXT PRIMARY KEY, json TEXT NOT NULL)`,
    );
  }

  /** Records a new enrollment; false when the id is taken. */
  add(enrollment: Enrollment): boolean {
    const result = this.#db
      .prepare(`INSERT INTO enrollment (id, json) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`)
      .run(enrollment.id, JSON.stringify(enrollment));
    return result.changes === 1;
  }

  find(id: string): Enrollment | undefined {
    const row = this.#db.prepare(`SELECT json FROM enrollment WHERE id = ?`).get(id) as
      { json: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.json) as Enrollment);
  }

  list(): Enrollment[] {
    const rows = this.#db.prepare(`SELECT json FROM enrollment ORDER BY id`).all() as {
      json: string;
    }[];
    return rows.map((row) => JSON.parse(row.json) as Enrollment);
  }

  /** Sets the status; returns the enrollment as it now is, or undefined when unknown. */
  setStatus(id: string, status: EnrollmentStatus): Enrollment | undefined {
    const current = this.find(id);
    if (current === undefined) return undefined;
    const next = { ...current, status };
    this.#db.prepare(`UPDATE enrollment SET json = ? WHERE id = ?`).run(JSON.stringify(next), id);
    return next;
  }

  close(): void {
    this.#db.close();
  }
}
