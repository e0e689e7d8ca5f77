/**
 * Where a group is in its source. A group on a stream counts event numbers; a group on `$all` will count
 * log positions, so the machine only ever compares positions through a `PositionOrder`.
 */
export interface PositionOrder<P> {
  /** Negative when `a` comes before `b`, zero when they are the same position, positive after. */
  readonly compare: (a: P, b: P) => number
}

export const eventNumberOrder: PositionOrder<number> = { compare: (a, b) => a - b }

/** Where the next read of the source starts: at a position (included) or after one (excluded). */
export type ReadFrom<P> =
  { readonly _tag: "At"; readonly position: P } | { readonly _tag: "After"; readonly position: P }

/** How a group starts: from its settings' start, after its last checkpoint, or with the events appended from now. */
export type GroupStart<P> = ReadFrom<P> | { readonly _tag: "Live" }

export const at = <P>(position: P): ReadFrom<P> => ({ _tag: "At", position })
export const after = <P>(position: P): ReadFrom<P> => ({ _tag: "After", position })

/** Whether `position` lies at or beyond `from` (so it is still to be taken). */
export const isAtOrBeyond = <P>(order: PositionOrder<P>, from: ReadFrom<P>, position: P): boolean => {
  const c = order.compare(position, from.position)
  return from._tag === "At" ? c >= 0 : c > 0
}
