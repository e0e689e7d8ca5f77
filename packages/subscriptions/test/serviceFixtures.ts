import { ClusterStatus } from "@vellum/cluster"
import { defaultStorageConfig, type StorageConfig } from "@vellum/storage"

/** A small store for the service's tests (on a MemoryDisk). */
export const storageConfig: StorageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false
}

/** The cluster status of a node alone: always the leader. */
export const singleNode = ClusterStatus.layerSingleNode({
  priority: 0,
  self: () => ({ instanceId: "00000000-0000-4000-8000-000000000001", httpHost: "127.0.0.1", httpPort: 2113 })
})
