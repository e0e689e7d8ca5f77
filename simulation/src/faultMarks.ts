/**
 * Which disk faults actually fired in a run: MemoryDisk counts each injected fault by kind, and each kind
 * that fired counts a coverage mark (a fault configured but never drawn exercised nothing).
 */
import type { MemoryDiskStats } from "@vellum/platform"
import type { Coverage, CoverageMark } from "./coverage.js"

const FaultMarks: ReadonlyArray<readonly [keyof MemoryDiskStats, CoverageMark]> = [
  ["readErrors", "fault.readError"],
  ["writeErrors", "fault.writeError"],
  ["syncErrors", "fault.syncError"],
  ["bitFlips", "fault.bitFlipOnRead"],
  ["latencies", "fault.latency"],
  ["diskFullErrors", "fault.diskFull"]
]

export const markDiskFaults = (coverage: Coverage, stats: MemoryDiskStats): void => {
  for (const [counter, mark] of FaultMarks) if (stats[counter] > 0) coverage.hit(mark, stats[counter])
}
