/**
 * One table of the snapshot page file, as lookups see it: the Bloom filter answers most misses, the page
 * directory says which page would hold a name, the page cache holds decoded pages. `peek` never does I/O;
 * `get` reads the page when it is not cached.
 */
import type { DiskError, FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import type { CachedPages, DecodedPage } from "./PageCache.js"
import { readPage, readPagePayload, type TableDirectory } from "./pageFile.js"
import type { TableSpec } from "./tables.js"
import { NotResident, type StateCorrupt } from "./types.js"

/** The snapshot file being read: undefined handle when there is no snapshot yet. */
export interface SnapshotSource {
  readonly handle: FileHandle | undefined
  readonly seq: number
  /** How many bytes the page cache may hold right now (the budget the delta leaves). */
  readonly cacheLimit: () => number
}

/** Index of the row named `name` in the ascending `names`, or -1. */
const indexOf = (names: ReadonlyArray<string>, name: string): number => {
  let lo = 0
  let hi = names.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = names[mid]!
    if (at === name) return mid
    if (at < name) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

export class SnapshotTable<V> {
  constructor(
    readonly spec: TableSpec<V>,
    private readonly source: SnapshotSource,
    readonly directory: TableDirectory,
    private readonly cached: CachedPages<V>
  ) {}

  get pageCount(): number {
    return this.directory.pages.length
  }

  firstKey(index: number): string {
    return this.directory.pages[index]!.firstKey
  }

  /** The last page whose first name is at most `name` (the only one that can hold it), or -1. */
  pageOf(name: string): number {
    const pages = this.directory.pages
    let lo = 0
    let hi = pages.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (pages[mid]!.firstKey <= name) lo = mid + 1
      else hi = mid
    }
    return lo - 1
  }

  /** The snapshot's row, undefined when it has none, NotResident when that needs a page read. */
  peek(name: string): V | undefined | NotResident {
    if (!this.directory.bloom.mightContain(name)) return undefined
    const index = this.pageOf(name)
    if (index < 0) return undefined
    const page = this.cached.get(index)
    if (page === undefined) return NotResident
    const at = indexOf(page.names, name)
    return at < 0 ? undefined : page.values[at]
  }

  get(name: string): Effect.Effect<V | undefined, DiskError | StateCorrupt> {
    const peeked = this.peek(name)
    if (peeked !== NotResident) return Effect.succeed(peeked)
    return Effect.map(this.page(this.pageOf(name), true), (page) => {
      const at = indexOf(page.names, name)
      return at < 0 ? undefined : page.values[at]
    })
  }

  /** Page `index`, from the cache or read (and cached when `caching` and it fits). */
  page(index: number, caching: boolean): Effect.Effect<DecodedPage<V>, DiskError | StateCorrupt> {
    const hit = this.cached.get(index)
    if (hit !== undefined) return Effect.succeed(hit)
    const handle = this.source.handle
    if (handle === undefined) return Effect.dieMessage("scavenge state: a page was asked of an empty snapshot")
    return Effect.tap(readPage(handle, this.source.seq, this.spec, this.directory.pages[index]!), (page) => {
      if (caching) this.cached.put(index, page, this.source.cacheLimit())
    })
  }

  /** Page `index` if it is cached. */
  cachedPage(index: number): DecodedPage<V> | undefined {
    return this.cached.get(index)
  }

  /** Page `index`'s checked bytes, undecoded. */
  payload(index: number): Effect.Effect<Buffer, DiskError | StateCorrupt> {
    const handle = this.source.handle
    if (handle === undefined) return Effect.dieMessage("scavenge state: a page was asked of an empty snapshot")
    return Effect.map(
      readPagePayload(handle, this.source.seq, this.spec.id, this.directory.pages[index]!),
      (p) => p.payload
    )
  }
}
