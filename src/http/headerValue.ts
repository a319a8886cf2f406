/** Visible ASCII, space and tab: what a header value may hold as is. */
const plain = (c: number) => c === 9 || (c >= 32 && c < 127);

/**
 * A response header value made of stored or computed text that can never break the response:
 * every character outside visible ASCII, space and tab (CR, LF, NUL, other controls, anything
 * non-ASCII) is percent-encoded as UTF-8 (a lone surrogate as U+FFFD), so Node never refuses the
 * header (a 500) and nothing stored can split it into a second header.
 */
export function headerValue(text: string): string {
  let i = 0;
  while (i < text.length && plain(text.charCodeAt(i))) i++;
  if (i === text.length) return text;
  let out = text.slice(0, i);
  for (const char of text.slice(i)) {
    if (plain(char.charCodeAt(0))) out += char;
    else {
      try {
        out += encodeURIComponent(char);
      } catch {
        out += '%EF%BF%BD';
      }
    }
  }
  return out;
}
