/**
 * The index's on-disk tables and its manifest, changed only by commits (TableIndex.ts decides when).
 *
 * - Opening reads the manifest, removes our files it does not list (half-written tables, temp
 *   manifests) and opens the listed tables; a listed table that is missing is IndexCorrupt.
 * - A change (a flush adds a table; a merge or a scavenge replaces tables with one, or with none) writes
 *   and syncs the new table and its directory entry, then commits: the manifest is rebuilt from the
 *   latest one under a lock (flushes, merges and scavenges run concurrently), saved, and applied to
 *   memory in the same uninterruptible step. Only then are the replaced tables retired (closed and
 *   removed). A crash leaves the old manifest or the new one, and every table either lists is complete.
 * - `tables` is in age order (table ids ascend), as the manifest lists them.
 */
import { Effect, type Scope } from "effect"
import { Disk, type DiskError, type DiskService, join } from "@vellum/platform"
import type { BlockCache } from "./BlockCache.js"
import { type EntrySource, IndexCorrupt } from "./Entry.js"
import {
  emptyManifest,
  type Manifest,
  MANIFEST_FILE,
  MANIFEST_TMP,
  readManifest,
  tableFileName,
  writeManifest
} from "./Manifest.js"
import { openTable, type Table } from "./Table.js"
import { writeTable } from "./TableWriter.js"

export type IndexError = DiskError | IndexCorrupt

export interface LiveTable {
  readonly table: Table
  readonly level: number
}

export interface TableSetOptions {
  readonly dir: string
  readonly entriesPerBlock: number
  readonly chunkBytes: number
  readonly cache: BlockCache
  readonly verifyOnOpen: boolean
}

const isOurFile = (name: string): boolean => name === MANIFEST_TMP || name.endsWith(".vtable")

export class TableSet {
  private readonly lock = Effect.unsafeMakeSemaphore(1)

  private constructor(
    private readonly disk: DiskService,
    private readonly options: TableSetOptions,
    /** The last saved manifest. */
    public manifest: Manifest,
    /** The open tables, as `manifest` lists them. */
    public tables: Array<LiveTable>,
    /** Next id to give a table (ids given out may not be listed yet). */
    private nextId: number
  ) {}

  /** Opens the tables the manifest of `options.dir` lists; they are closed when the Scope closes. */
  static open(options: TableSetOptions): Effect.Effect<TableSet, IndexError, Disk | Scope.Scope> {
    return Effect.gen(function* () {
      const disk = yield* Disk
      const dir = options.dir
      yield* disk.mkdir(dir)
      const manifest = (yield* readManifest(dir)) ?? emptyManifest
      const listed = new Set(manifest.tables.map((t) => t.file))
      for (const name of yield* disk.list(dir)) {
        // Other components' files in the directory are left alone.
        if (isOurFile(name) && !listed.has(name)) yield* disk.remove(join(dir, name))
      }
      const set = new TableSet(disk, options, manifest, [], manifest.nextTableId)
      yield* Effect.addFinalizer(() =>
        Effect.forEach(set.tables, (t) => Effect.ignore(t.table.close()), { discard: true })
      )
      for (const t of [...manifest.tables].sort((a, b) => a.id - b.id)) {
        const path = join(dir, t.file)
        const table = yield* Effect.mapError(
          openTable(path, t.id, { verify: options.verifyOnOpen, chunkBytes: options.chunkBytes, cache: options.cache }),
          (e) =>
            e._tag === "DiskError" && e.reason === "NotFound"
              ? new IndexCorrupt({ path, message: `table ${path} listed in the manifest is missing` })
              : e
        )
        set.tables.push({ table, level: t.level })
      }
      return set
    })
  }

  /**
   * Commits the tables minus `replaced` plus `added`, and `coveredUpTo`: saves the manifest and applies
   * the change to memory (and `onSwap`) as one step that an interruption cannot split.
   */
  commit(
    replaced: ReadonlyArray<Table>,
    added: LiveTable | undefined,
    coveredUpTo: number,
    onSwap?: () => void
  ): Effect.Effect<void, DiskError> {
    const gone = new Set(replaced.map((t) => t.id))
    return this.lock
      .withPermits(1)(
        Effect.uninterruptible(
          Effect.suspend(() => {
            const listed = this.manifest.tables.filter((t) => !gone.has(t.id))
            if (added !== undefined)
              listed.push({ id: added.table.id, level: added.level, file: tableFileName(added.table.id) })
            const next: Manifest = {
              coveredPosition: Math.max(this.manifest.coveredPosition, coveredUpTo),
              nextTableId: this.nextId,
              tables: listed
            }
            return Effect.map(writeManifest(this.options.dir, next), () => {
              this.manifest = next
              this.tables = this.tables.filter((t) => !gone.has(t.table.id))
              if (added !== undefined) this.tables.push(added)
              onSwap?.()
            })
          })
        )
      )
      .pipe(Effect.provideService(Disk, this.disk))
  }

  /**
   * Builds a new table at `level` from `source`, then commits it in place of `replaced` and retires
   * those. Once the table is open, nothing can interrupt before the commit decides who owns it (the
   * index, or nobody: then it is closed). An empty result is not listed (then `replaced` just go).
   * Returns the new file's size (0 when empty).
   */
  buildAndCommit<E>(
    level: number,
    source: EntrySource<E>,
    replaced: ReadonlyArray<Table>,
    coveredUpTo: number,
    onSwap?: () => void
  ): Effect.Effect<number, IndexError | E> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(this.build(this.nextId++, source)), (table) =>
        Effect.onError(
          Effect.zipRight(
            this.commit(replaced, table === undefined ? undefined : { table, level }, coveredUpTo, onSwap),
            Effect.as(
              Effect.forEach(replaced, (t) => this.retire(t), { discard: true }),
              table?.fileBytes ?? 0
            )
          ),
          () => (table === undefined ? Effect.void : Effect.ignore(table.close()))
        )
      )
    )
  }

  /** Writes `source` as table `id`, syncs it and its directory entry and opens it; undefined (no file) when empty. */
  private build<E>(id: number, source: EntrySource<E>): Effect.Effect<Table | undefined, IndexError | E> {
    const { dir, entriesPerBlock, chunkBytes, cache } = this.options
    const disk = this.disk
    const path = join(dir, tableFileName(id))
    return Effect.onError(
      Effect.gen(function* () {
        const written = yield* writeTable(path, source, { entriesPerBlock, chunkBytes })
        if (written.entryCount === 0) {
          yield* disk.remove(path)
          return undefined
        }
        yield* disk.syncDir(dir)
        return yield* openTable(path, id, { cache })
      }),
      // Unlisted, so the next open would remove it anyway; an interrupted scavenge should not leave it.
      () => Effect.ignore(disk.remove(path))
    ).pipe(Effect.provideService(Disk, disk))
  }

  /** Closes and removes a table that is no longer listed; a read still using it fails with Closed and retries. */
  private retire(table: Table): Effect.Effect<void> {
    return Effect.suspend(() => {
      table.retired = true
      this.options.cache.dropTable(table.id)
      // A failed removal only leaves an unlisted file, which the next open removes.
      return Effect.zipRight(Effect.ignore(table.close()), Effect.ignore(this.disk.remove(table.path)))
    })
  }
}

/**
 * Removes the index's files from `dir` (tables, manifest, temp manifest): what the caller does before
 * rebuilding the index from the log after an IndexCorrupt. Other files in the directory stay.
 */
export const wipe = (dir: string): Effect.Effect<void, DiskError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    if (!(yield* disk.exists(dir))) return
    for (const name of yield* disk.list(dir)) {
      if (isOurFile(name) || name === MANIFEST_FILE) yield* disk.remove(join(dir, name))
    }
    yield* disk.syncDir(dir)
  })

/** Number of tables at each level (index = level). */
export const levelCounts = (tables: ReadonlyArray<LiveTable>): Array<number> => {
  const counts: Array<number> = []
  for (const t of tables) {
    while (counts.length <= t.level) counts.push(0)
    counts[t.level]!++
  }
  return counts
}

/** The tables by level, then by age (the reference's index-map order), with their rank in the level. */
export const inIndexMapOrder = (tables: ReadonlyArray<LiveTable>) => {
  const ranks: Array<number> = []
  // Array.prototype.sort is stable: each level keeps its age order.
  return [...tables]
    .sort((a, b) => a.level - b.level)
    .map((live) => {
      const index = ranks[live.level] ?? 0
      ranks[live.level] = index + 1
      return { live, level: live.level, index }
    })
}
