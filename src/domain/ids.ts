/**
 * Branded identifiers. They are made by parse functions at the edges (or by the caller that mints them)
 * and enter the domain as arguments.
 */

export type TaskId = string & { readonly __brand: "TaskId" };
export type RunId = string & { readonly __brand: "RunId" };
export type OwnerId = string & { readonly __brand: "OwnerId" };
export type FencingToken = string & { readonly __brand: "FencingToken" };
export type ThreadId = string & { readonly __brand: "ThreadId" };

export const taskId = (value: string): TaskId => value as TaskId;
export const runId = (value: string): RunId => value as RunId;
export const ownerId = (value: string): OwnerId => value as OwnerId;
export const fencingToken = (value: string): FencingToken => value as FencingToken;
export const threadId = (value: string): ThreadId => value as ThreadId;
