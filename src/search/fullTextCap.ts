import { defaultOf, readSetting } from '../config.js';
/**
 * The full-text candidate cap (SEARCH_FULLTEXT_CAP, default 2,000): a query matching more
 * documents than this is ranked over a bounded candidate set (see fullTextHits), and says so
 * (ranking `fulltext_bounded`). Every search reads up to the cap and one more of its matches to
 * count them, so the cap is what a query past it pays before its bounded ranking (~7 ms for 2,000
 * at 100,000 articles, ~10 for 3,000); it is configurable down to 10 so that `npm run
 * eval:search` can show what the rule costs.
 */
export const DEFAULT_FULL_TEXT_CAP = defaultOf('SEARCH_FULLTEXT_CAP');

let parsed: { raw: string | undefined; cap: number } | null = null;

/** The cap the environment sets (read again when it changes); a value that is not an integer from 10 to 1,000,000 is an error naming the setting. */
export function fullTextCap(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SEARCH_FULLTEXT_CAP;
  if (parsed && parsed.raw === raw) return parsed.cap;
  parsed = { raw, cap: readSetting('SEARCH_FULLTEXT_CAP', env) };
  return parsed.cap;
}
