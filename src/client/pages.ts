/**
 * Cursor pagination: a list answers one page and a `next_cursor` (null on the last page); `pagesOf`
 * walks them as an async iterator, asking for the next page only when the caller wants it.
 */
import type { PageView } from "../application/shapes/view-mappers.js";

/** Which page of a list, and how big. */
export interface PageQuery {
  /** Items per page, 1..200. @default 50 */
  readonly limit?: number | undefined;
  /** `next_cursor` of the previous page; absent for the first. */
  readonly cursor?: string | undefined;
}

/** Every page from `cursor` on; `fetchPage` is asked for one page at a time. */
export async function* pagesOf<T>(
  cursor: string | undefined,
  fetchPage: (cursor: string | undefined) => Promise<PageView<T>>,
): AsyncGenerator<PageView<T>, void, undefined> {
  let next = cursor;
  for (;;) {
    const page = await fetchPage(next);
    yield page;
    if (page.next_cursor === null) return;
    next = page.next_cursor;
  }
}
