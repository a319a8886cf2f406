/** What the spec worker answers for a client's OpenAPI document (shared by the worker and the thread that asks it). */

/** One operation of a spec, with the page it renders to. */
export interface SpecOperation {
  key: string;
  method: string;
  path: string;
  title: string;
  tag: string;
  hash: string;
  markdown: string;
}

/** What a document yields: its title and versions, its operations with their pages, and warnings. */
export interface ParsedSpec {
  title: string | null;
  version: string | null;
  openapiVersion: string;
  operations: SpecOperation[];
  warnings: string[];
}
