/**
 * What runs a projection's logic: the user's JavaScript in its sandbox (`execution/`) or a system projection's
 * native handler (`engine/systemHandler.ts`). The engine owns positions, the state cache, checkpoints and
 * writes; the handler owns the fold. States cross as stored text (compact JSON; "" is no state).
 */
import type { Effect } from "effect"
import type { SourceItem } from "../sources/SourceReader.js"

/** What a handler asks to write; the engine stamps the metadata (position, `$v`, `$causedBy`, ...). */
export interface EmittedWrite {
  readonly stream: string
  readonly eventType: string
  readonly isJson: boolean
  /** UTF-8 text of the data (JSON text for `emit`, `{n}@{stream}` for a link, a stream id for `$@`). */
  readonly data: string
  /** Metadata members after the stamp's position: name and raw JSON text, in order. */
  readonly extraMetadata: ReadonlyArray<readonly [string, string]>
  /**
   * The engine's own result links only: `data` is ignored and the link points at the event this same item
   * wrote last into `linkToWrittenIn` (a partition's `Result` linked from the root result stream).
   */
  readonly linkToWrittenIn?: string
}

export interface HandlerItem {
  readonly source: SourceItem
  /** "" for the root partition. */
  readonly partition: string
  /**
   * The partition's stored state text, when the handler must load it (the first item of a partition after
   * another partition's, or after a reload). Absent: the handler goes on with the live state it holds, which
   * is this partition's (the previous item's); the reference keeps the live object between such events.
   * "" means no stored state: the handler initialises the partition (`$init`, then `$created`).
   */
  readonly state?: string
  /** Bi-state only: the shared (root) state's stored text, when it must be loaded; same rules as `state`. */
  readonly shared?: string
}

export interface HandlerOutcome {
  /** The partition's state text after the item ("" for a null or undefined state). */
  readonly state: string
  /** Bi-state only: the shared state's text after the item. */
  readonly shared?: string
  /** The state text differs from what it was before the item. */
  readonly stateChanged: boolean
  /** Present only when the state changed: the new result text (the transform chain's, or the state), null = none. */
  readonly result?: string | null
  /** In the order asked: what `$created` asked first, then the handler's. */
  readonly emitted: ReadonlyArray<EmittedWrite>
  /** The partition was initialised by this item. */
  readonly created: boolean
}

/** User code failed on an item: `message` is the reason's last part (the engine frames it with the position). */
export interface HandlerFault {
  readonly _tag: "HandlerFault"
  /** Index of the failing item in the batch. */
  readonly index: number
  readonly message: string
  /** The JavaScript stack, "" when there is none. */
  readonly stack: string
  /** Outcomes of the items before `index`, which succeeded. */
  readonly done: ReadonlyArray<HandlerOutcome>
}

export interface ProjectionHandler {
  /**
   * `partitionBy` projections only: each item's partition key ("" = root), undefined = skip the item (the
   * function returned neither a string nor a number). A fault's `done` is empty.
   */
  readonly partitionsOf: (
    items: ReadonlyArray<SourceItem>
  ) => Effect.Effect<ReadonlyArray<string | undefined>, HandlerFault>
  /** Folds the items in order: one outcome per item. */
  readonly process: (items: ReadonlyArray<HandlerItem>) => Effect.Effect<ReadonlyArray<HandlerOutcome>, HandlerFault>
  /** Forgets the live state (the next item of any partition comes with its stored state). */
  readonly forgetLiveState: () => void
  /** Bytes the handler's runtime holds (the sandbox's QuickJS memory; 0 for native handlers). */
  readonly memoryBytes: () => number
}
