/**
 * Recent answers of conditional routes (those reading `If-None-Match`), serialised once, by route,
 * caller and request. An entry is only ever served after the service confirmed, for this caller,
 * that its ETag is still current (the facade sends it as `ifNoneMatch`), so a change made through
 * any process is never hidden by it; it saves building and serialising an unchanged answer.
 */
export interface CachedAnswer {
  etag: string;
  body: unknown;
  /** `body` as JSON text, sent as is. */
  raw: string;
  nextCursor: string | null;
}

export class AnswerCache {
  private readonly entries = new Map<string, CachedAnswer>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 64,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  get(key: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CachedAnswer): void {
    this.delete(key);
    if (entry.raw.length > this.maxBytes / 4) return;
    this.entries.set(key, entry);
    this.bytes += entry.raw.length;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.delete(this.entries.keys().next().value!);
  }

  private delete(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.bytes -= old.raw.length;
  }
}
