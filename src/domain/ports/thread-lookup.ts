/** The thread lookup port (docs/architecture.md#ports): whether a target's thread exists. */
import type { OwnerId, ThreadId } from "../ids.js";

/** Whether a thread exists and is usable by an owner (one answer, so foreign threads cannot be probed). */
export interface ThreadLookup {
  threadExists(owner: OwnerId, threadScope: string, threadId: ThreadId): Promise<boolean>;
}
