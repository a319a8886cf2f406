/**
 * Whether an `If-Match` / `If-None-Match` header value names `etag`: `*` names any current
 * version, and entity tags are compared weakly (a `W/` prefix is ignored), as RFC 9110 has
 * If-None-Match compare them.
 */
export function etagMatches(header: string, etag: string): boolean {
  const wanted = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === wanted;
  });
}
