/**
 * When memory notes were last read, recorded off the read: a note GET is a plain read (a replica
 * may serve it), and this process gathers each note's latest read and writes them all to the
 * primary in one statement every second, as file systems' relatime does. `accessedAt` in every
 * other answer (lists, searches, events, exports) therefore trails a read by up to about a second
 * (plus the flush's own time), and a process that is killed loses at most its last second of reads.
 */
import type { Logger } from 'pino';
import type { NoteAccessRecorder } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { recordNoteAccesses, type NoteAccess } from '../store/memoryNotes.js';

/** A note's access time moves at most once a second: reads within a second of the last one show its time. */
export const NOTE_ACCESS_RESOLUTION_MS = 1_000;
/** How often a process writes the reads it gathered. */
export const NOTE_ACCESS_FLUSH_MS = 1_000;
/** Most notes one statement records; a busier second is written in several. */
const BATCH = 5_000;

const isForeignKeyViolation = (error: unknown) => (error as { code?: string }).code === '23503';

/** This process's reads of notes since the last flush (the latest per note), written to memory_note_access. */
export class NoteAccessLog implements NoteAccessRecorder {
  private pending = new Map<number, NoteAccess>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: SqlTarget,
    private readonly logger: Logger,
    flushMs = NOTE_ACCESS_FLUSH_MS,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /**
   * A read of a note: its access time advances to now when the last one known here (stored, or
   * gathered since the last flush) is at least NOTE_ACCESS_RESOLUTION_MS old, as before; the time to show.
   */
  touch(noteId: number, workspaceId: string, stored: Date, now = new Date()): Date {
    const gathered = this.pending.get(noteId)?.at;
    const last = gathered && gathered > stored ? gathered : stored;
    if (now.getTime() - last.getTime() < NOTE_ACCESS_RESOLUTION_MS) return last;
    this.pending.set(noteId, { noteId, workspaceId, at: now });
    return now;
  }

  /** Writes what was gathered since the last flush (one flush at a time; waits for one under way, then writes what came since). */
  async flush(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (!this.pending.size) return;
    const accesses = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = this.write(accesses).finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async write(accesses: NoteAccess[]): Promise<void> {
    for (let i = 0; i < accesses.length; i += BATCH) {
      const batch = accesses.slice(i, i + BATCH);
      try {
        await recordNoteAccesses(this.db, batch).catch((error: unknown) => {
          // A note deleted while the statement ran: the next try skips it.
          if (isForeignKeyViolation(error)) return recordNoteAccesses(this.db, batch);
          throw error;
        });
      } catch (error) {
        this.logger.warn({ err: error, notes: batch.length }, 'note access times were not recorded');
      }
    }
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
