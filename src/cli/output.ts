/** Terminal output helpers: aligned tables and a progress indicator. */

/** Rows as an aligned text table with a header line. */
export function table(headers: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i]))).join('  ')).join('\n');
}

/** Seconds as `1m05s` / `12s`. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** Bytes as B / KiB / MiB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

type Stream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * Progress of long work on stderr: a bar with ETA redrawn in place on a terminal, else a plain
 * line at most once a second (and at the end). `total` 0 means unknown (no bar, no ETA).
 */
export class Progress {
  private readonly started = Date.now();
  private lastLine = 0;
  private done = 0;

  constructor(
    private readonly stream: Stream,
    private readonly label: string,
    private total: number,
    private readonly unit: (n: number) => string = String,
  ) {}

  /** Sets the amount done so far (and the total when it became known). */
  update(done: number, total = this.total): void {
    this.done = done;
    this.total = total;
    const now = Date.now();
    if (now - this.lastLine < (this.stream.isTTY ? 100 : 1000)) return;
    this.lastLine = now;
    this.draw(false);
  }

  /** Final line (with the final amount when given). */
  finish(done = this.done): void {
    this.done = done;
    this.draw(true);
  }

  private draw(final: boolean): void {
    const elapsed = (Date.now() - this.started) / 1000;
    const fraction = this.total > 0 ? Math.min(1, this.done / this.total) : 0;
    const rate = elapsed > 0 ? this.done / elapsed : 0;
    const eta = this.total > 0 && rate > 0 ? (this.total - this.done) / rate : NaN;
    const count = this.total > 0 ? `${this.unit(this.done)}/${this.unit(this.total)}` : this.unit(this.done);
    const tail = final ? `done in ${duration(elapsed)}` : this.total > 0 ? `ETA ${duration(eta)}` : `${duration(elapsed)}`;
    if (this.stream.isTTY) {
      const width = 24;
      const filled = Math.round(fraction * width);
      const bar = this.total > 0 ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` : '';
      this.stream.write(`\r\x1b[2K${this.label} ${bar}${count} ${tail}${final ? '\n' : ''}`);
    } else {
      const percent = this.total > 0 ? ` (${(fraction * 100).toFixed(0)}%)` : '';
      this.stream.write(`${this.label}: ${count}${percent} ${tail}\n`);
    }
  }
}
