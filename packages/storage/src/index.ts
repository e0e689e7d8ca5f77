// @vellum/storage: one node's database — transaction log, table index, stream rules, the EventStore service.
export * from "./errors.js"
export * from "./EventStore.js"
export * from "./streams/names.js"
export * from "./streams/metadata.js"
export {
  SystemLinkAccess,
  parseLinkTarget,
  type LinkAccess,
  type LinkTarget,
  type ResolvedEvent
} from "./streams/links.js"
export type { EventRecord, LogRecord, NewRecord } from "./log/records.js"
export { RecordKind, EventFlags, encodeRecord, decodeRecord, framedLength } from "./log/records.js"
export type { WriteResult, WritesRefused } from "./streams/Writer.js"
export { streamHash64, type HashFn, type StreamHash } from "./tableindex/StreamHash.js"
export { BLOOM_BITS_PER_KEY, BLOOM_PROBES, bloomAdd, bloomMayContain, bloomWordsFor } from "./tableindex/Bloom.js"
export type { TransactionLog, ScanResult, TailReport } from "./log/TransactionLog.js"
export { DEFAULT_CHECKPOINT_LAG } from "./log/TransactionLog.js"
export { readCheckpointValue } from "./log/Checkpoint.js"
export { HEADER_SIZE as CHUNK_HEADER_SIZE, chunkFileName, parseChunkFileName } from "./log/chunkFormat.js"
export type { KeepRecord } from "./log/ChunkRewrite.js"
export { RecordScan, scanRecords, type ScanOptions, type ScannedRecord } from "./log/RecordScanner.js"
export { BufferPool } from "./log/BufferPool.js"
export type { ChunkFile } from "./log/ChunkFile.js"
export type { ReadIndex } from "./streams/ReadIndex.js"
export type { TableIndex } from "./tableindex/TableIndex.js"
export { checksum, checksumUpdate } from "./codec/checksum.js"
export { ByteWriter } from "./codec/bytes.js"
export { parseJsonObject, utf8Text } from "./codec/json.js"
export type { CommitGate, EpochRef, NotLeading, RawChunk, RawSlice, ReplicaLog } from "./replica/ReplicaLog.js"
export { isRawChunk } from "./replica/ReplicaLog.js"
