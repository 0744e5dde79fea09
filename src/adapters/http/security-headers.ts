/**
 * The headers every page punctual serves to a browser carries (the dashboard, `/docs`;
 * docs/security.md#pages-and-media-types): a strict Content-Security-Policy of the page's own, no MIME
 * sniffing, no referrer, no framing.
 */
import { createHash } from "node:crypto";

/** The headers besides the CSP. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-cache",
});

/** A CSP source naming one inline `<script>` or `<style>` by its SHA-256. */
export function inlineSource(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * The CSP of a self-contained page: only its inline script and style (by hash) run, it may call its own
 * origin, and nothing else loads.
 */
export function inlinePageCsp(html: string): string {
  const inline = (tag: string): string[] =>
    [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) =>
      inlineSource(m[1] ?? ""),
    );
  return [
    "default-src 'none'",
    `script-src ${inline("script").join(" ") || "'none'"}`,
    `style-src ${inline("style").join(" ") || "'none'"}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}
