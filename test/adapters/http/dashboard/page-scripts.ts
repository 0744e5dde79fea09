/**
 * What the dashboard's page makes a browser load: its `<script src>` entries, then each module's
 * imports (static and dynamic), resolved against the importing module's URL, each fetched once.
 */
import ts from "typescript";

export interface LoadedFile {
  readonly url: string;
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export interface LoadedPage extends LoadedFile {
  /** Every script the page loads, in the order a browser would discover them. */
  readonly scripts: readonly LoadedFile[];
}

async function load(url: string): Promise<LoadedFile> {
  const response = await fetch(url);
  return { url, status: response.status, headers: response.headers, body: await response.text() };
}

/** The module specifiers a script imports. */
export function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/** Loads the page at `base` and every script it loads. */
export async function loadPage(base: string): Promise<LoadedPage> {
  const page = await load(`${base}/`);
  const pending = [...page.body.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map(
    (match) => new URL(match[1] ?? "", page.url).href,
  );
  const scripts = new Map<string, LoadedFile>();
  for (let url = pending.shift(); url !== undefined; url = pending.shift()) {
    if (scripts.has(url)) continue;
    const script = await load(url);
    scripts.set(url, script);
    if (script.status !== 200) continue;
    for (const specifier of importsOf(script.body)) pending.push(new URL(specifier, url).href);
  }
  return { ...page, scripts: [...scripts.values()] };
}
