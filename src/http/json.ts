import { jsonTextDepthOver } from '../contract/check.js';
import { JSON_MAX_DEPTH, SAY } from '../contract/rules.js';

/** JSON text as parsed, or why it was refused: not JSON, or nested past JSON_MAX_DEPTH. */
export type ParsedJson = { ok: true; value: unknown } | { ok: false; reason: 'syntax' | 'depth'; message: string };

/**
 * Parses a request's JSON text for any door, refusing first, without parsing it, text that nests
 * past JSON_MAX_DEPTH: nothing that recurses ever meets a deeper value. Each door answers the
 * refusal in its own shape (an envelope, a JSON-RPC error, an OAuth error).
 */
export function parseJsonText(text: string): ParsedJson {
  if (jsonTextDepthOver(text, JSON_MAX_DEPTH)) return { ok: false, reason: 'depth', message: SAY.jsonDepth(JSON_MAX_DEPTH) };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: 'syntax', message: `is not valid JSON: ${(error as Error).message}` };
  }
}
