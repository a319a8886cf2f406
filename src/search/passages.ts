/**
 * Passages: what the sentence encoder reads of a document. The encoder gives one vector for a
 * short text, and a long text's vector is dominated by its opening, so a document is cut into
 * passages (one per Markdown section, sections longer than the encoder reads cut further into
 * windows that overlap), each embedded with the document's title and its section heading, and a
 * document is ranked by its best passage (see VectorIndex.nearest).
 *
 * Sizes chosen by `npm run eval:search` on its tuning questions (see docs/behaviour.md, search).
 */

/** Longest passage, in characters of Markdown (about what the encoder reads before its opening dominates). */
export const PASSAGE_CHARS = 600;
/** Characters a window shares with the one before it, so a sentence cut by a window boundary is whole in one of them. */
export const PASSAGE_OVERLAP = 150;
/** At most this many passages per document (a longer one's tail is not embedded): bounds a document's embedding cost. */
export const MAX_PASSAGES = 120;

/** A passage: `embed` is what the encoder reads; `source` the Markdown it covers (the snippet of a hit on it). */
export interface Passage {
  embed: string;
  source: string;
}

interface Section {
  heading: string;
  body: string;
}

const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^ {0,3}(```|~~~)/;

/** Splits Markdown at its ATX headings (not inside fenced code); text before the first heading is a section without one. */
export function sections(markdown: string): Section[] {
  const out: Section[] = [];
  let current: Section = { heading: '', body: '' };
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (FENCE.test(line)) fenced = !fenced;
    const heading = fenced ? null : HEADING.exec(line);
    if (heading) {
      if (current.body.trim() || current.heading) out.push(current);
      current = { heading: withoutMarkup(heading[2]), body: '' };
    } else current.body += `${line}\n`;
  }
  if (current.body.trim() || current.heading) out.push(current);
  return out;
}

/** Cuts text into windows of at most `size` characters, at whitespace, each starting `size - overlap` after the last. */
export function windows(text: string, size = PASSAGE_CHARS, overlap = PASSAGE_OVERLAP): string[] {
  const trimmed = text.trim();
  if (trimmed.length <= size) return trimmed ? [trimmed] : [];
  const out: string[] = [];
  let start = 0;
  while (start < trimmed.length) {
    let end = Math.min(trimmed.length, start + size);
    if (end < trimmed.length) {
      const space = trimmed.lastIndexOf(' ', end);
      const newline = trimmed.lastIndexOf('\n', end);
      const cut = Math.max(space, newline);
      if (cut > start + size / 2) end = cut;
    }
    out.push(trimmed.slice(start, end).trim());
    if (end >= trimmed.length) break;
    let next = end - overlap;
    const space = trimmed.indexOf(' ', next);
    if (space > next && space < end) next = space + 1;
    start = Math.max(next, start + 1);
  }
  return out;
}

/**
 * The passages of a document: its title, then per section the heading and a window of the
 * section's text. A document without text is its title alone.
 */
export function passagesOf(title: string, markdown: string, limits = { size: PASSAGE_CHARS, overlap: PASSAGE_OVERLAP }): Passage[] {
  const out: Passage[] = [];
  for (const section of sections(markdown)) {
    const context = section.heading && section.heading !== title ? `${title}: ${section.heading}` : title;
    const parts = windows(section.body, limits.size, limits.overlap);
    if (!parts.length && section.heading) parts.push('');
    for (const source of parts) {
      const text = withoutMarkup(source);
      out.push({ embed: text ? `${context}. ${text}` : context, source: source || section.heading });
      if (out.length >= MAX_PASSAGES) return out;
    }
  }
  return out.length ? out : [{ embed: title, source: '' }];
}

/**
 * Markdown as a reader sees it, for the sentence encoder: no heading marks, emphasis, code ticks,
 * table bars, escapes, link targets or images; whitespace collapsed. Measured by
 * `npm run eval:search` on its tuning questions: semantic recall@5 0.221 -> 0.240 over the raw
 * Markdown (when each document was one vector of its opening).
 */
export function withoutMarkup(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1')
    .replace(/[*`]+/g, '')
    .replace(/[#_>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
