/**
 * The school's HTTP entry on node:http: `POST /enrollments` (an enrollment's id, student and course),
 * `POST /enrollments/{id}/drop`, `POST /enrollments/{id}/finish`, `GET /enrollments`,
 * `GET /enrollments/{id}` (with its reminders and their runs).
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Course, Student } from "../domain/enrollment.js";
import type { School } from "./school.js";

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const chunk of req as AsyncIterable<Buffer>) text += chunk.toString("utf8");
  return JSON.parse(text) as unknown;
}

type Answer = readonly [status: number, body: unknown];
const NOT_FOUND: Answer = [404, { error: "not found" }];

export function schoolHttp(school: School, now: () => Date = () => new Date()): Server {
  const route = async (req: IncomingMessage): Promise<Answer> => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname.split("/").filter(Boolean);
    const [collection, id, action] = path;
    if (collection !== "enrollments") return NOT_FOUND;
    if (req.method === "POST" && id === undefined) {
      const body = (await readJson(req)) as { id: string; student: Student; course: Course };
      return [201, await school.enroll(body, now())];
    }
    if (req.method === "POST" && id !== undefined && (action === "drop" || action === "finish")) {
      const ended = await school.end(id, action === "drop" ? "dropped" : "finished");
      return ended === undefined ? NOT_FOUND : [200, ended];
    }
    if (req.method === "GET" && id === undefined) return [200, { items: school.list() }];
    if (req.method === "GET" && id !== undefined) {
      const enrollment = school.find(id);
      if (enrollment === undefined) return NOT_FOUND;
      return [200, { enrollment, reminders: await school.reminders(id) }];
    }
    return [405, { error: "method not allowed" }];
  };
  return createServer((req, res) => {
    route(req).then(
      ([status, body]) => {
        reply(res, status, body);
      },
      (error: unknown) => {
        reply(res, error instanceof SyntaxError ? 400 : 500, { error: String(error) });
      },
    );
  });
}
