/**
 * The cancellation signal the ports speak of, as a structural type: the domain compiles without Node's
 * or the DOM's globals, and a real `AbortSignal` satisfies it.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}
