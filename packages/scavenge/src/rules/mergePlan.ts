/**
 * Which completed chunks a merge pass combines: walking the completed physical
 * chunks in order, greedily group neighbours while their record data together fits in one chunk; every
 * group of two or more becomes one merged chunk. A pass is repeated until it merges nothing.
 */

export interface MergeCandidate {
  readonly startNumber: number
  readonly endNumber: number
  /** Bytes of record data in the file (no header, footer or position map). */
  readonly physicalDataSize: number
}

export interface MergeGroup {
  readonly startNumber: number
  readonly endNumber: number
  readonly chunks: number
}

export const planMerges = (completed: ReadonlyArray<MergeCandidate>, chunkSize: number): Array<MergeGroup> => {
  const groups: Array<MergeGroup> = []
  let first: MergeCandidate | undefined
  let last: MergeCandidate | undefined
  let size = 0
  let count = 0
  const close = () => {
    if (first !== undefined && last !== undefined && count >= 2)
      groups.push({ startNumber: first.startNumber, endNumber: last.endNumber, chunks: count })
  }
  for (const chunk of completed) {
    if (first !== undefined && size + chunk.physicalDataSize <= chunkSize) {
      last = chunk
      size += chunk.physicalDataSize
      count++
      continue
    }
    close()
    first = chunk
    last = chunk
    size = chunk.physicalDataSize
    count = 1
  }
  close()
  return groups
}
