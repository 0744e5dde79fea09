// @ts-check
/**
 * The days to skip as the dashboard's forms write them, one per line, in the command line's spelling
 * (docs/schedules.md#exclude): `2026-12-25`, `2026-12-24..2026-12-26`, `days:25 12 *`,
 * `calendar:holidays`, or a JSON item. Also the item behind an excluded fire in words. Pure and free of
 * the DOM, so the page and Node (its unit tests) import the same module.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const RANGE = /^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})$/;

/**
 * One line as an item of `exclude` (the server checks it and names a bad one by its index). Three
 * day fields alone (`* * sat,sun`) are a day rule too.
 * @param {string} line
 * @returns {unknown}
 */
export function itemOfLine(line) {
  const text = line.trim();
  if (DATE.test(text)) return text;
  const range = RANGE.exec(text);
  if (range) return { from: range[1], to: range[2] };
  if (text.startsWith("days:")) return { days: text.slice(5).trim() };
  if (text.startsWith("calendar:")) return { calendar: text.slice(9).trim() };
  if (text.startsWith("{")) {
    try {
      return /** @type {unknown} */ (JSON.parse(text));
    } catch {
      return text;
    }
  }
  return { days: text };
}

/**
 * The items of a text area, one per non-blank line.
 * @param {string} text
 * @returns {unknown[]}
 */
export function itemsOfText(text) {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(itemOfLine);
}

/**
 * An item as its line: the inverse of `itemOfLine`.
 * @param {unknown} item
 * @returns {string}
 */
export function lineOfItem(item) {
  if (typeof item === "string") return item;
  if (typeof item === "object" && item !== null) {
    /** @type {Readonly<Record<string, unknown>>} */
    const fields = /** @type {Readonly<Record<string, unknown>>} */ (item);
    if (typeof fields["days"] === "string") return "days:" + fields["days"];
    if (typeof fields["calendar"] === "string") return "calendar:" + fields["calendar"];
    if (typeof fields["from"] === "string" && typeof fields["to"] === "string")
      return fields["from"] + ".." + fields["to"];
  }
  return JSON.stringify(item);
}

/**
 * A list of items as the text area shows it.
 * @param {unknown} items
 * @returns {string}
 */
export function textOfItems(items) {
  return Array.isArray(items) ? items.map(lineOfItem).join("\n") : "";
}

/**
 * The item that excluded a fire, in words: `the date 2026-12-25 of calendar "holidays"`.
 * @param {{ readonly item: unknown, readonly calendar: string | null } | undefined} hit
 * @returns {string}
 */
export function exclusionWords(hit) {
  if (hit === undefined) return "a date the schedule's exclude names";
  const item = hit.item;
  /** @type {Readonly<Record<string, unknown>>} */
  const fields =
    typeof item === "object" && item !== null
      ? /** @type {Readonly<Record<string, unknown>>} */ (item)
      : {};
  const what =
    typeof item === "string"
      ? "the date " + item
      : typeof fields["days"] === "string"
        ? 'the day rule "' + fields["days"] + '"'
        : "the dates " + String(fields["from"]) + " to " + String(fields["to"]);
  return hit.calendar === null ? what : what + ' of calendar "' + hit.calendar + '"';
}
