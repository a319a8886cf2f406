/** The ts_headline fragment search snippets are made with, and the two marks it puts around matches. */

/** Private-use characters marking a match's start and end (removed from the text beforehand, so stored text cannot forge one). */
const OPEN = '\uE000';
const CLOSE = '\uE001';
export { OPEN as HEADLINE_OPEN, CLOSE as HEADLINE_CLOSE };

/** The ts_headline call for a text expression and a tsquery expression. */
export function headlineSql(text: string, query: string): string {
  return (
    `ts_headline('english', translate(${text}, '${OPEN}${CLOSE}', ''), ${query}, 'StartSel=${OPEN}, StopSel=${CLOSE}, MaxWords=35, MinWords=12, ` +
    `MaxFragments=2, FragmentDelimiter=" … "')`
  );
}
