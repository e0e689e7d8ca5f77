// A fixed EventStore.stats() snapshot for the node-endpoint tests (stats documents and metrics).
import type { EventStoreStats } from "@vellum/storage"

export const storageStats = (writer: Partial<EventStoreStats["writer"]> = {}): EventStoreStats => ({
  writerPosition: 5000,
  committedPosition: 4096,
  chunks: 2,
  index: { tables: 3, levels: [2, 1], memtableEntries: 10, memtables: 1, tableEntries: 300, residentBytes: 9000 },
  readCache: { hits: 40, misses: 2, residentBytes: 65536 },
  writer: {
    rounds: 100, commands: 500, lastFlushSize: 1024, lastFlushDelayMs: 1.5, maxFlushSize: 4096, maxFlushDelayMs: 9,
    totalFlushSize: 50_000, totalFlushDelayMs: 200, flushes: 100, queued: 0, ...writer
  }
})
