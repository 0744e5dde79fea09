/** Vitest global setup of the examples: builds dist/ (only when src/ is newer), which `punctual` points at. */
import { ensureBuilt } from "../test/e2e/build.js";

export default async function setup(): Promise<void> {
  await ensureBuilt();
}
