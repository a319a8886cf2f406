/**
 * Search snippets are made by PostgreSQL's ts_headline from stored text that anyone with write
 * access chose, so they are escaped as HTML and the only markup they carry is `<mark>…</mark>`.
 * ts_headline marks matches with two private-use characters (removed from the text beforehand,
 * so stored text cannot forge a mark), which become the tags after the text is escaped.
 */
import { HEADLINE_CLOSE as CLOSE, HEADLINE_OPEN as OPEN } from '../store/headline.js';

// The fragment is written where the statements are; services that build their own import it from here.
export { headlineSql } from '../store/headline.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  [OPEN]: '<mark>',
  [CLOSE]: '</mark>',
};

/** A ts_headline result as safe HTML: the text escaped, matches in `<mark>…</mark>`. */
export function safeSnippet(headline: string | null | undefined): string {
  return (headline ?? '').replace(/[&<>"'\uE000\uE001]/g, (ch) => ESCAPES[ch]);
}
