/** Where the school keeps its enrollments: a SQLite file of its own (or `:memory:`), beside punctual's store. */
import Database from "better-sqlite3";
import type { Enrollment, EnrollmentStatus } from "../domain/enrollment.js";

/** A row's JSON: the enrollment and the instant it was first recorded (RFC 3339). */
interface StoredEnrollment extends Enrollment {
  readonly enrolledAt: string;
}

function enrollmentOf(stored: StoredEnrollment): Enrollment {
  return {
    id: stored.id,
    student: stored.student,
    course: stored.course,
    status: stored.status,
  };
}

export class EnrollmentRepository {
  readonly #db: Database.Database;

  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS enrollment (id TEXT PRIMARY KEY, json TEXT NOT NULL)`,
    );
  }

  /**
   * Records a new enrollment and when it was made; false when the id is taken (the first record, and
   * its time, stay: planning it again plans the same reminders).
   */
  add(enrollment: Enrollment, enrolledAt: Date): boolean {
    const record: StoredEnrollment = { ...enrollment, enrolledAt: enrolledAt.toISOString() };
    const result = this.#db
      .prepare(`INSERT INTO enrollment (id, json) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`)
      .run(enrollment.id, JSON.stringify(record));
    return result.changes === 1;
  }

  find(id: string): Enrollment | undefined {
    const stored = this.#stored(id);
    return stored === undefined ? undefined : enrollmentOf(stored);
  }

  /** When the enrollment was first recorded. */
  enrolledAt(id: string): Date | undefined {
    const stored = this.#stored(id);
    return stored === undefined ? undefined : new Date(stored.enrolledAt);
  }

  #stored(id: string): StoredEnrollment | undefined {
    const row = this.#db.prepare(`SELECT json FROM enrollment WHERE id = ?`).get(id) as
      { json: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.json) as StoredEnrollment);
  }

  list(): Enrollment[] {
    const rows = this.#db.prepare(`SELECT json FROM enrollment ORDER BY id`).all() as {
      json: string;
    }[];
    return rows.map((row) => enrollmentOf(JSON.parse(row.json) as StoredEnrollment));
  }

  /** Sets the status; returns the enrollment as it now is, or undefined when unknown. */
  setStatus(id: string, status: EnrollmentStatus): Enrollment | undefined {
    const current = this.find(id);
    if (current === undefined) return undefined;
    const next = { ...this.#stored(id), ...current, status };
    this.#db.prepare(`UPDATE enrollment SET json = ? WHERE id = ?`).run(JSON.stringify(next), id);
    return next;
  }

  close(): void {
    this.#db.close();
  }
}
