/**
 * What the subscriptions workload's consumers saw and did, per group, and the rules it must obey. The model
 * is a history per event id: every time a consumer got the event (with its retry count), and what the
 * consumer then did with that copy. It does not predict delivery order (strategies, buffers and timing
 * decide that); it judges what was delivered against what was durable, and at the end, after the drain,
 * what the store holds against what the consumers did.
 *
 * What a consumer does with a copy is recorded before it calls the service, so a crash between the record
 * and the call leaves the model claiming an action that never happened; every rule below holds either way,
 * because an action that never happened leaves the event unfinished and so delivered again later.
 *
 * A copy's fate, as the service treats it:
 * - ack, nack Skip: finished;
 * - nack Park: parked (finished once the park is durable);
 * - nack Retry, nack Stop (nothing to stop over HTTP: it stays in flight) or no answer (it times out):
 *   handed out again with its retry count raised, or parked once the count has reached maxRetryCount.
 * A copy whose consumer's node crashed, or whose group was updated or restarted, has no fate: the event is
 * handed out again unless a durable checkpoint covers it.
 */

export type Action = "ack" | "skip" | "park" | "retry" | "stop" | "abandon"

export interface Copy {
  readonly life: number
  readonly position: number
  readonly retryCount: number
  /** What the consumer did with it (undefined: nothing yet, or its node crashed first). */
  action: Action | undefined
  /** The group's maxRetryCount when the consumer decided. */
  maxRetryCount: number
}

/** Whether a copy's fate may be a park: asked for, or a retry with none left. */
export const mayPark = (copy: Copy): boolean =>
  copy.action === "park" ||
  ((copy.action === "retry" || copy.action === "stop" || copy.action === "abandon") &&
    copy.retryCount >= copy.maxRetryCount)

/** Whether a copy's fate finishes its event (acked, skipped or parked). */
export const finishes = (copy: Copy): boolean => copy.action === "ack" || copy.action === "skip" || mayPark(copy)

/** One event of a group's source, as the store holds it at the end. */
export interface SourceEvent {
  readonly id: string
  readonly position: number
}

export class GroupModel {
  /** Every copy handed out, by event id, oldest first. */
  readonly copies = new Map<string, Array<Copy>>()
  /** The group's checkpoint read from the store at the start of the current lifetime (faults paused). */
  durableCheckpoint: number | undefined
  /** A replay of parked messages was asked for in the current lifetime. */
  replayAsked = false
  /** The largest maxRetryCount the group had in the current lifetime (an update may lower it). */
  maxRetryCountInLife: number

  constructor(
    readonly key: string,
    maxRetryCount: number
  ) {
    this.maxRetryCountInLife = maxRetryCount
  }

  /** A new lifetime of the node: what was durable when it started. */
  beginLife(checkpoint: number | undefined, maxRetryCount: number): void {
    this.durableCheckpoint = checkpoint
    this.replayAsked = false
    this.maxRetryCountInLife = maxRetryCount
  }

  settingsChanged(maxRetryCount: number): void {
    this.maxRetryCountInLife = Math.max(this.maxRetryCountInLife, maxRetryCount)
  }

  parkIntents(id: string): number {
    return (this.copies.get(id) ?? []).filter(mayPark).length
  }

  /**
   * A copy handed out; answers why it breaks a rule, if it does.
   * - Its retry count never exceeds maxRetryCount: past it the message is parked, not retried.
   * - Nothing at or before the checkpoint that was durable when this lifetime started is handed out again
   *   (the group resumes after it), except a parked message replayed in this lifetime: a replay hands out
   *   old positions again by design (for a `$all` group, the event's number rather than its log position).
   */
  delivered(id: string, copy: Copy, checkpointWhenAsked: number | undefined): string | undefined {
    const list = this.copies.get(id) ?? []
    const replayable = this.replayAsked && list.some(mayPark)
    list.push(copy)
    this.copies.set(id, list)
    if (copy.retryCount > this.maxRetryCountInLife)
      return `${this.key}: event ${id} handed out with retry count ${copy.retryCount}, past maxRetryCount ${this.maxRetryCountInLife}`
    if (checkpointWhenAsked !== undefined && copy.position <= checkpointWhenAsked && !replayable)
      return `${this.key}: event ${id} at ${copy.position} handed out again after a restart, though the durable checkpoint ${checkpointWhenAsked} covers it`
    return undefined
  }
}

/**
 * The end rules, after the drain (every group caught up, nothing held) with faults paused. `source` is the
 * group's source as the store holds it; `parked` the ids the parked stream's live part (past its `$tb`)
 * links to, in order.
 *
 * - Nothing lost: every source event was handed out, and its last copy's fate finished it.
 * - Nothing invented: every copy handed out is of an event of the source.
 * - A last copy that was parked is in the parked stream (a replayed one is truncated only once finished).
 * - The parked stream links only to events some copy of which may have been parked, each at most as often
 *   as its copies may have been. The documented duplicate: a park durable before a crash that came before
 *   the checkpoint covering it is handed out again from the source, and may be parked again (or acked, and
 *   still be in the parked stream) — every such park is a copy the model saw, so the bound holds.
 */
export const checkEnd = (
  model: GroupModel,
  source: ReadonlyArray<SourceEvent>,
  parked: ReadonlyArray<string>
): Array<string> => {
  const problems: Array<string> = []
  const inSource = new Set(source.map((e) => e.id))
  const parkedCount = new Map<string, number>()
  for (const id of parked) parkedCount.set(id, (parkedCount.get(id) ?? 0) + 1)
  for (const event of source) {
    const copies = model.copies.get(event.id)
    const last = copies?.[copies.length - 1]
    // A replayed copy cut short by a crash leaves the event parked: its link is truncated only once finished.
    if (last === undefined) problems.push(`${model.key}: event ${event.id} at ${event.position} was never handed out`)
    else if (!finishes(last) && !parkedCount.has(event.id))
      problems.push(
        `${model.key}: event ${event.id} at ${event.position} is lost: its last copy (retry ${last.retryCount}, life ${last.life}) was ${last.action ?? "never answered"}, and it is not parked`
      )
  }
  for (const id of model.copies.keys())
    if (!inSource.has(id)) problems.push(`${model.key}: event ${id} was handed out but is not in the group's source`)
  for (const event of source) {
    const copies = model.copies.get(event.id) ?? []
    const last = copies[copies.length - 1]
    // A last copy that may have been parked was: had its group stopped first, the event would have been
    // handed out again (it was not finished, so no checkpoint covered it).
    if (last !== undefined && mayPark(last) && !parkedCount.has(event.id))
      problems.push(
        `${model.key}: event ${event.id} was parked (its last copy: ${last.action}, retry ${last.retryCount} of ${last.maxRetryCount}) but is not in the parked stream`
      )
  }
  for (const [id, count] of parkedCount) {
    const intents = model.parkIntents(id)
    if (count > intents)
      problems.push(
        `${model.key}: the parked stream links to ${id} ${count} times, but at most ${intents} of its copies may have been parked`
      )
  }
  return problems
}
