/**
 * CRC-32C (Castagnoli), slice-by-8, in plain TypeScript.
 *
 * Node 20 has no built-in CRC32C (zlib.crc32 is CRC-32 and arrived in Node 22), and record checksums sit
 * on the hottest paths (every append and every read), so this is a table-driven loop over Uint8Array.
 * `crc32c(data)` checksums a whole buffer; `crc32cUpdate(crc, data, start, end)` continues a running
 * checksum (start from 0), so a chunk's checksum can be built incrementally as records are appended.
 */
const POLY = 0x82f63b78

const TABLES: ReadonlyArray<Uint32Array> = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256))
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
    tables[0]![n] = c >>> 0
  }
  for (let n = 0; n < 256; n++) {
    let c = tables[0]![n]!
    for (let t = 1; t < 8; t++) {
      c = tables[0]![c & 0xff]! ^ (c >>> 8)
      tables[t]![n] = c >>> 0
    }
  }
  return tables
})()

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array]

/** Continues a CRC-32C over data[start, end). Pass 0 as `crc` to start a new checksum. */
export const crc32cUpdate = (crc: number, data: Uint8Array, start = 0, end = data.length): number => {
  let c = ~crc >>> 0
  let i = start
  const fastEnd = end - 8
  while (i <= fastEnd) {
    const lo = (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)) ^ c
    const hi = data[i + 4]! | (data[i + 5]! << 8) | (data[i + 6]! << 16) | (data[i + 7]! << 24)
    c = T7[lo & 0xff]! ^ T6[(lo >>> 8) & 0xff]! ^ T5[(lo >>> 16) & 0xff]! ^ T4[lo >>> 24]! ^
      T3[hi & 0xff]! ^ T2[(hi >>> 8) & 0xff]! ^ T1[(hi >>> 16) & 0xff]! ^ T0[hi >>> 24]!
    i += 8
  }
  while (i < end) c = T0[(c ^ data[i++]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

export const crc32c = (data: Uint8Array, start = 0, end = data.length): number => crc32cUpdate(0, data, start, end)
