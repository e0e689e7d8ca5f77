// The table index: stream hash → (eventNumber → log position), memtables plus leveled on-disk tables.
export * from "./Entry.js"
export * from "./StreamHash.js"
export { MemTable } from "./MemTable.js"
export { BlockCache } from "./BlockCache.js"
export { openTable, Table, type OpenTableOptions, type TableFooter } from "./Table.js"
export { writeTable, type WriteTableOptions, type WrittenTable } from "./TableWriter.js"
export { mergeSource } from "./Merge.js"
export { type KeepEntry, TableFilter, type TableScavenged } from "./Scavenge.js"
export {
  type Manifest,
  type ManifestTable,
  readManifest,
  writeManifest,
  MANIFEST_FILE,
  tableFileName
} from "./Manifest.js"
export {
  open,
  wipe,
  type IndexError,
  type TableIndex,
  type TableIndexConfig,
  type TableIndexStats
} from "./TableIndex.js"
