/**
 * The records of the slices a follower wrote and has not indexed yet, as `appendRaw` decoded them to check
 * them: committing them (commitFromLog.ts) takes them from here instead of reading and decoding the log
 * again, which was a third of a catching-up node's work. Only exactly what was written is held, in log
 * order; a change of the log by anything else (a cut, an installed chunk file, a recovery, leading) clears
 * it, and a commit falls back to the log for whatever is not here. Bounded: past `maxBytes` of slices, the
 * oldest go (their records are then read from the log as before).
 */
import type { LogRecord } from "../log/records.js"
import type { ScanResult } from "../log/TransactionLog.js"

interface HeldSlice {
  readonly records: ReadonlyArray<LogRecord>
  readonly position: number
  readonly end: number
}

export class ReceivedRecords {
  private slices: Array<HeldSlice> = []
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  /** The records of the slice [position, end) just written (whole records, in order). */
  add(records: ReadonlyArray<LogRecord>, position: number, end: number): void {
    if (records.length === 0) return
    const last = this.slices[this.slices.length - 1]
    // Only a run in log order is held: anything else means the log changed under it.
    if (last !== undefined && position < last.end) this.clear()
    this.slices.push({ records, position, end })
    this.bytes += end - position
    while (this.bytes > this.maxBytes && this.slices.length > 1) this.drop()
  }

  clear(): void {
    this.slices = []
    this.bytes = 0
  }

  /**
   * What `TransactionLog.scanForward(from, limit, maxCount)` would give, from the held records, if they
   * hold the record at `from`; otherwise undefined. A page stops where positions jump (a chunk's end), as
   * the slices do.
   */
  scan(from: number, limit: number, maxCount: number): ScanResult | undefined {
    while (this.slices.length > 0 && this.slices[0]!.end <= from) {
      const passed = this.drop()
      // From the end of a chunk's data (slices in log order jump only there) to the next chunk.
      const following = this.slices[0]
      if (passed.end === from && following !== undefined && following.position > from)
        return { records: [], next: following.position, reachedEnd: following.position >= limit }
    }
    const first = this.slices[0]
    if (first === undefined || first.position > from) return undefined
    let index = first.records.findIndex((r) => r.logPosition === from)
    if (index < 0) return undefined
    const records: Array<LogRecord> = []
    let next = from
    let reachedEnd = false
    slices: for (let s = 0; s < this.slices.length && records.length < maxCount; s++, index = 0) {
      const slice = this.slices[s]!
      if (s > 0 && slice.position !== next) break
      for (; index < slice.records.length && records.length < maxCount; index++) {
        const end = index + 1 < slice.records.length ? slice.records[index + 1]!.logPosition : slice.end
        if (end > limit) {
          reachedEnd = true
          break slices
        }
        records.push(slice.records[index]!)
        next = end
      }
    }
    return records.length === 0 ? undefined : { records, next, reachedEnd: reachedEnd || next >= limit }
  }

  private drop(): HeldSlice {
    const gone = this.slices.shift()!
    this.bytes -= gone.end - gone.position
    return gone
  }
}
