/** Where a bench deployment keeps its data: a SQLite file or a PostgreSQL database (optionally a schema). */
export type StoreTarget =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema?: string };
