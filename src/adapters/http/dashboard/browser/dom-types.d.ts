/**
 * The types of the dashboard's DOM builder (`h` in dom.js); types only, the page never loads this file.
 */

/**
 * What `h` and `nodesOf` take as children: nodes, text (numbers and booleans as text), nested lists;
 * null, undefined and false are left out.
 */
export type Child = Node | string | number | boolean | null | undefined | readonly Child[];

/** An event listener given to `h` as an `on<event>` attribute. */
export type Listener = (event: never) => void;

/**
 * Attributes and properties of an element built by `h`: text, numbers and booleans (false or null
 * leaves one out), and `on<event>` listeners.
 */
export interface Attrs {
  readonly [key: string]: string | number | boolean | null | undefined | Listener;
  readonly onclick?: (event: MouseEvent) => void;
  readonly onsubmit?: (event: SubmitEvent) => void;
}
