// Node-endpoint test fixtures: a fixed EventStore.stats() snapshot (stats documents and metrics), and a parser of the Prometheus exposition text.
import { expect } from "vitest"
import type { EventStoreStats } from "@vellum/storage"
import { idleSnapshot, type ProcessSnapshot } from "../src/endpoints/index.js"

/** A busy process that started at `startMillis` (every figure set, so a mapping that drops one shows). */
export const processSnapshot = (startMillis: number, over: Partial<ProcessSnapshot> = {}): ProcessSnapshot => ({
  ...idleSnapshot(startMillis),
  pid: 4242,
  cpuCount: 2,
  cpuMicros: 5_000_000,
  residentBytes: 50_000_000,
  threads: 11,
  heap: { youngBytes: 1_000, oldBytes: 20_000, largeObjectBytes: 3_000, usedBytes: 24_000, totalBytes: 32_000 },
  gc: { minorCount: 7, incrementalCount: 2, majorCount: 1, pauseMicros: 100_000, allocatedBytes: 1_000_000 },
  eventLoop: { delayMeanMs: 10.5, delayMaxMs: 30, delayP99Ms: 25, utilization: 0.25 },
  diskIo: { readBytes: 4096, writtenBytes: 8192, readOps: 3, writeOps: 5 },
  system: {
    cpuBusyMicros: 30,
    cpuTotalMicros: 120,
    freeMemBytes: 1_000,
    totalMemBytes: 4_000,
    loadAverage: [0.5, 0.25, 0.125]
  },
  drive: { name: "/", availableBytes: 25, totalBytes: 100 },
  ...over
})

export const storageStats = (writer: Partial<EventStoreStats["writer"]> = {}): EventStoreStats => ({
  writerPosition: 5000,
  committedPosition: 4096,
  chunks: 2,
  index: { tables: 3, levels: [2, 1], memtableEntries: 10, memtables: 1, tableEntries: 300, residentBytes: 9000 },
  readCache: { hits: 40, misses: 2, residentBytes: 65536 },
  reads: { events: 70, bytes: 7000 },
  writer: {
    rounds: 100,
    commands: 500,
    eventsWritten: 800,
    lastFlushSize: 1024,
    lastFlushDelayMs: 1.5,
    maxFlushSize: 4096,
    maxFlushDelayMs: 9,
    totalFlushSize: 50_000,
    totalFlushDelayMs: 200,
    flushes: 100,
    queued: 0,
    ...writer
  }
})

export interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

/** Parses the exposition text: `# HELP`/`# TYPE` lines and `name{a="b",…} value` samples. */
export const parseExposition = (text: string) => {
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type !== null) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (line.startsWith("# HELP ")) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    expect(m, `unparsable line: ${line}`).not.toBeNull()
    const labels: Record<string, string> = {}
    for (const pair of (m![2] ?? "").split(",").filter((p) => p !== "")) {
      const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)="(.*)"$/.exec(pair)
      expect(lm, `bad label ${pair}`).not.toBeNull()
      labels[lm![1]!] = lm![2]!
    }
    samples.push({ name: m![1]!, labels, value: Number(m![3]) })
  }
  return { types, samples }
}

export const value = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Record<string, string> = {}
): number | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
