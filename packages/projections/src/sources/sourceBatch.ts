/** Building one batch: items in order, the position after each record, and the bytes passed without an item. */
import { framedLength, type EventRecord } from "@vellum/storage"
import type { CheckpointTag } from "../persisted/checkpointTag.js"
import type { SourceBatch, SourceItem } from "./SourceReader.js"
import type { Classified } from "./sourceRecords.js"

/** Records read per request: at most the store's page, never less than one. */
export const pageSize = (maxItems: number, maxReadCount: number): number =>
  Math.max(1, Math.min(maxReadCount, maxItems))

/**
 * Records a read may pass over without finding an item before it answers (an empty batch that is not at the
 * end): a source that filters out nearly everything still answers in bounded time.
 */
export const scanBudget = (maxItems: number, maxReadCount: number): number => Math.max(maxItems, maxReadCount)

export class BatchBuilder {
  readonly items: Array<SourceItem> = []
  skippedBytes = 0
  scanned = 0
  /** Just past the last record taken (where the log was read up to). */
  reached: number
  next: CheckpointTag

  constructor(
    after: CheckpointTag,
    from: number,
    private readonly maxItems: number,
    private readonly category: string | null
  ) {
    this.next = after
    this.reached = from
  }

  get full(): boolean {
    return this.items.length >= this.maxItems
  }

  /** Whether to stop reading although the source may have more: a full batch, or the scan budget spent. */
  done(budget: number): boolean {
    return this.full || (this.items.length === 0 && this.scanned >= budget)
  }

  /** Takes the record `positionRecord` (what lies in the source) as `outcome`, moving the position to `tag`. */
  take(positionRecord: EventRecord, outcome: Classified, tag: CheckpointTag): void {
    const bytes = framedLength(positionRecord)
    this.scanned++
    this.next = tag
    this.reached = positionRecord.logPosition + bytes
    if (outcome.kind === "skip") {
      this.skippedBytes += bytes
      return
    }
    this.items.push({
      kind: outcome.kind,
      event: outcome.event,
      link: outcome.link,
      tag,
      logPosition: positionRecord.logPosition,
      category: this.category,
      partitionStream: outcome.partitionStream
    })
  }

  batch(atEnd: boolean, endPosition: number): SourceBatch {
    return {
      items: this.items,
      next: this.next,
      atEnd,
      skippedBytes: this.skippedBytes,
      logPosition: atEnd ? Math.max(endPosition, this.reached) : this.reached
    }
  }
}
