// The documented client loop over the user's mailbox (docs/protocol.md "The client's loop"; the same states
// as src/client/mailbox_feed.h): SYNC from the cursor until `more` is false, pushes applied only when they
// continue what is held (`from <= cursor`), holes healed by SYNC (seq gaps and SYNC_NEEDED), each entry
// shown once (by seq) and each message once (by message_id, within a window). QimClient owns the
// connection and starts a run after each AUTH; this holds the cursor and the runs.
import type { ClientFrame, Deliver, Entry, ServerFrame, SyncPage } from './frames.js';
import type { CursorStore } from './client_options.js';
import { QimError, QimTimeoutError } from './errors.js';

/** What the loop needs of the client. */
export interface LoopHost {
  /** The connection's generation: an answer that comes after it changed belongs to a dropped connection. */
  generation(): number;
  /** A SYNC frame sent on the connection, resolved with its page (or rejected with the error). */
  request(frame: Extract<ClientFrame, { type: 'SYNC' }>): Promise<ServerFrame>;
  ref(): string;
  /** Whether the server pushes only (delivery mode `push`: no SYNC to heal a hole). */
  pushOnly(): boolean;
  backoffDelay(attempt: number): number;
  /** Every entry above the cursor (the server counts every one, a second copy too). */
  counted(e: Entry): void;
  /** An entry to show: the first copy of its message, not a deleted-for-me stub. */
  shown(e: Entry): void;
  /** A run finished: the cursor is at least its frontier. */
  synced(cursor: string): void;
  error(e: Error): void;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

export class MailboxLoop {
  private cursorValue: bigint;
  private syncing = false;
  private resyncWanted = false;
  private syncAfter = 0n;
  private readonly pushes: Deliver[] = [];
  // The last dedupWindow message ids shown (a Set keeps insertion order: the oldest is first).
  private readonly recentIds = new Set<string>();
  private duplicateCount = 0;

  constructor(
    private readonly host: LoopHost,
    private readonly store: CursorStore,
    private readonly syncLimit: number,
    private readonly dedupWindow: number,
  ) {
    const stored = store.load();
    this.cursorValue = stored && /^[0-9]+$/.test(stored) ? BigInt(stored) : 0n;
    for (const id of store.loadRecentIds?.() ?? []) this.remember(id);
  }

  get cursor(): string {
    return this.cursorValue.toString();
  }
  get duplicates(): number {
    return this.duplicateCount;
  }

  /** The connection went: the next one starts again at step 1 (its SYNC covers the pushes dropped here). */
  reset(): void {
    this.syncing = false;
    this.resyncWanted = false;
    this.pushes.length = 0;
  }

  /** SYNC from the cursor now, or once the run in progress is done. */
  resync(): void {
    if (this.syncing) this.resyncWanted = true;
    else this.beginSync();
  }

  beginSync(): void {
    this.syncing = true;
    this.resyncWanted = false;
    this.syncAfter = this.cursorValue;
    this.requestPage();
  }

  onDeliver(d: Deliver): void {
    if (this.syncing) {
      this.pushes.push(d);
      return;
    }
    if (!this.apply(d)) {
      this.pushes.push(d); // once the SYNC is done it is either covered or continues
      this.beginSync();
    }
  }

  private requestPage(): void {
    const generation = this.host.generation();
    const frame: Extract<ClientFrame, { type: 'SYNC' }> = {
      type: 'SYNC',
      ref: this.host.ref(),
      after: this.syncAfter.toString(),
      limit: this.syncLimit,
    };
    this.host.request(frame).then(
      (page) => {
        if (generation === this.host.generation()) this.onPage(page as SyncPage);
      },
      (e: Error) => {
        if (generation !== this.host.generation()) return; // the connection went: the next one syncs again
        if (e instanceof QimError && e.code === 'EXPIRED_CURSOR' && this.syncAfter !== 0n) {
          // Below the trim: read from the oldest retained entry; the cursor still filters what is shown.
          this.syncAfter = 0n;
          this.requestPage();
          return;
        }
        this.syncing = false;
        this.host.error(e);
        if (e instanceof QimTimeoutError || (e instanceof QimError && e.retryable)) {
          setTimeout(() => {
            if (generation === this.host.generation()) this.resync();
          }, this.host.backoffDelay(1));
        }
      },
    );
  }

  private onPage(page: SyncPage): void {
    this.show(page.entries);
    if (page.entries.length > 0) this.syncAfter = BigInt(page.entries[page.entries.length - 1].seq);
    if (page.more && page.entries.length > 0) {
      this.requestPage();
      return;
    }
    // The run is complete: it held every entry up to the frontier it was bounded by.
    this.setCursor(max(this.cursorValue, BigInt(page.frontier)));
    if (this.resyncWanted) {
      this.beginSync();
      return;
    }
    this.syncing = false;
    this.host.synced(this.cursor);
    this.drainPushes();
  }

  // Applies a push that continues what is held; false if it may follow a hole (then SYNC first).
  private apply(d: Deliver): boolean {
    const continues = d.from !== undefined && BigInt(d.from) <= this.cursorValue;
    if (!continues && !this.host.pushOnly()) return false;
    this.show(d.entries);
    if (continues) this.setCursor(max(this.cursorValue, BigInt(d.frontier)));
    return true;
  }

  private drainPushes(): void {
    while (this.pushes.length > 0 && !this.syncing) {
      const d = this.pushes.shift()!;
      if (!this.apply(d)) {
        this.pushes.unshift(d);
        this.beginSync();
      }
    }
  }

  private show(entries: Entry[]): void {
    for (const e of entries) {
      const seq = BigInt(e.seq);
      if (seq <= this.cursorValue) continue; // shown already (a push and a SYNC page may overlap)
      this.setCursor(seq);
      this.host.counted(e);
      // The same message at another seq (split brain stores it once per epoch): passed, not shown again.
      if (e.message_id && e.message_id !== '0' && !this.remember(e.message_id)) {
        this.duplicateCount++;
        continue;
      }
      if (e.deleted_for_me) continue; // a stub of a message deleted for the user: its place, nothing to show
      this.host.shown(e);
    }
    this.store.saveRecentIds?.([...this.recentIds]);
  }

  // Remembers a message id; false if it was remembered already. At most dedupWindow ids are kept.
  private remember(id: string): boolean {
    if (this.dedupWindow <= 0) return true;
    if (this.recentIds.has(id)) return false;
    this.recentIds.add(id);
    if (this.recentIds.size > this.dedupWindow) {
      this.recentIds.delete(this.recentIds.values().next().value as string);
    }
    return true;
  }

  private setCursor(c: bigint): void {
    if (c === this.cursorValue) return;
    this.cursorValue = c;
    this.store.save(c.toString());
  }
}
