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

/**
 * The versions a conditional header names, for resources tagged `"v<version>"`: `any` for `*`,
 * else the numbers of its tags (weak or strong; tags of another form name no version).
 */
export function versionsNamed(header: string): number[] | 'any' {
  const versions: number[] = [];
  for (const tag of header.split(',')) {
    const t = tag.trim();
    if (t === '*') return 'any';
    const match = /^(?:W\/)?"v(\d{1,9})"$/.exec(t);
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

/** The ETag of a versioned resource (articles, memory notes). */
export function versionEtag(version: number): string {
  return `"v${version}"`;
}
