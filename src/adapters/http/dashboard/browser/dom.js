// @ts-check
/**
 * The dashboard's one DOM builder, `h`, and `element` for the page's fixed elements. Every server value
 * reaches the page as a text node or a property, never as HTML: nothing here parses markup.
 */

/** @import { Attrs, Child } from "./dom-types.js" */

/**
 * An element with attributes and children. A function is an `on<event>` listener; a key the element
 * has as a property is set as one (so `value` and `selected` take), except `list`, which is read-only
 * and set as an attribute.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    // The key names the event, so the listener gets the event type its attribute says (see Attrs).
    if (typeof value === "function")
      node.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (key === "class") node.className = String(value);
    else if (key in node && key !== "list") Reflect.set(node, key, value);
    else node.setAttribute(key, String(value));
  }
  node.append(...nodesOf(children));
  return node;
}

/**
 * Children as nodes: strings become text nodes; null, undefined and false are left out.
 * @param {readonly Child[]} children
 * @returns {(Node | string)[]}
 */
export function nodesOf(children) {
  /** @type {(Node | string)[]} */
  const nodes = [];
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (child instanceof Node) nodes.push(child);
    else if (typeof child === "object") nodes.push(...nodesOf(child));
    else nodes.push(String(child));
  }
  return nodes;
}

/**
 * The page's element `#id`, which must be a `type`.
 * @template {HTMLElement} E
 * @param {string} id
 * @param {new () => E} type
 * @returns {E}
 */
export function element(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return found;
}
