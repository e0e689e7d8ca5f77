/**
 * The reference model of one group run by the Subscriptions service (see service-model.test.ts): every event
 * of the group's stream, and every copy of a parked event being replayed, with its state, its retry count and
 * when it was handed out; the durable checkpoint the group last started from; the links of its parked stream
 * and how far replays truncated it. The harness (serviceHarness.ts) tells it what the consumers did, what
 * time it is at each tick of the service, what the store holds, and when the group restarted; it throws on
 * anything the service did that the model forbids.
 */
import type { GroupSettings } from "../src/config/GroupSettings.js"
import type { NackAction } from "../src/group/types.js"

export type State = "pending" | "inflight" | "acked" | "skipped" | "parking" | "parked" | "covered"

/** An event of the group's stream (`copy` false) or a parked one replayed (`copy` true). */
export interface Instance {
  readonly id: string
  readonly position: number
  readonly copy: boolean
  state: State
  /** Retries since the group last started: the retry count its next delivery must carry. */
  retries: number
  /** When it was last handed out. */
  at: number
  /** Acked, skipped or durably parked at some point, in this run of the group or an earlier one. */
  everFinished: boolean
}

export interface Link {
  readonly number: number
  readonly id: string
}

/** Finished in this run: nothing may hand it out again until the group restarts before it. */
const finishedStates: ReadonlySet<State> = new Set(["acked", "skipped", "parked", "covered"])
export const isFinished = (i: Instance): boolean => finishedStates.has(i.state)

export class ModelViolation extends Error {}

const fail = (message: string): never => {
  throw new ModelViolation(message)
}

export class GroupModel {
  /** The group's events by position (from `startAt`). */
  readonly source = new Map<number, Instance>()
  copies: Array<Instance> = []
  /** The checkpoint the current run started after (undefined: none, it started at `startAt`). */
  loadCheckpoint: number | undefined
  /** The parked stream's links of this group, as the model expects them; `nextLink` is the next to read. */
  readonly links: Array<Link> = []
  nextLink: number
  truncatedBefore: number
  /** A replay read and not yet truncated: the parked numbers before `before` go once `ids` are not held. */
  replay: { readonly before: number; readonly ids: ReadonlySet<string> } | undefined
  readonly seen = { deliveries: 0, redeliveries: 0, timeouts: 0, parks: 0, replayed: 0, truncations: 0 }

  constructor(
    readonly stream: string,
    readonly group: string,
    public settings: GroupSettings,
    /** The first event number that is the group's (0, or the stream's head + 1 for a group created at the end). */
    readonly startAt: number,
    /** The checkpoint the service wrote at creation (a group created at the end of a stream with events). */
    checkpoint: number | undefined,
    parkedNext: number
  ) {
    this.loadCheckpoint = checkpoint
    this.nextLink = parkedNext
    this.truncatedBefore = parkedNext
  }

  /** Events of the stream, by number, as they are appended. */
  appended(ids: ReadonlyArray<string>, firstNumber: number): void {
    ids.forEach((id, i) => {
      const position = firstNumber + i
      if (position < this.startAt) return
      this.source.set(position, { id, position, copy: false, state: "pending", retries: 0, at: 0, everFinished: false })
    })
  }

  private instances(): Array<Instance> {
    return [...this.source.values(), ...this.copies]
  }

  inFlight(): Array<Instance> {
    return this.instances().filter((i) => i.state === "inflight")
  }

  parking(): Array<Instance> {
    return this.instances().filter((i) => i.state === "parking")
  }

  /** A message the service handed out at `now`: it must be an instance the model has waiting, with its retry count. */
  delivered(id: string, position: number, retryCount: number, now: number): void {
    const where = `${this.stream}::${this.group} handed out #${position} (${id}) with retry count ${retryCount}`
    if (retryCount > this.settings.maxRetryCount) fail(`${where}: above maxRetryCount ${this.settings.maxRetryCount}`)
    const source = this.source.get(position)
    if (source === undefined || source.id !== id) return fail(`${where}: not an event of the group`)
    if (this.instances().some((i) => i.id === id && i.state === "inflight")) fail(`${where}: still in flight`)
    const waiting = [source, ...this.copies.filter((c) => c.id === id)].filter((i) => i.state === "pending")
    if (waiting.length === 0)
      return fail(`${where}: the model has it ${source.state} (checkpoint ${this.loadCheckpoint}), no replayed copy`)
    const matching = waiting.filter((i) => i.retries === retryCount)
    if (matching.length === 0)
      return fail(`${where}: the model counts ${waiting.map((i) => `${i.retries} (${i.copy ? "copy" : "event"})`)}`)
    // Retried events come before replayed copies; a copy before an event not yet handed out this run.
    const copy = matching.find((i) => i.copy)
    const chosen = matching.includes(source) && (source.retries > 0 || copy === undefined) ? source : copy!
    if (
      chosen === source &&
      source.everFinished &&
      this.loadCheckpoint !== undefined &&
      position <= this.loadCheckpoint
    )
      fail(`${where}: finished before the checkpoint ${this.loadCheckpoint}`)
    this.seen.deliveries++
    if (chosen.retries > 0 || chosen.everFinished) this.seen.redeliveries++
    chosen.state = "inflight"
    chosen.at = now
  }

  private holding(id: string): Instance | undefined {
    return this.instances().find((i) => i.id === id && i.state === "inflight")
  }

  ack(ids: ReadonlyArray<string>): void {
    for (const id of ids) {
      const instance = this.holding(id)
      if (instance !== undefined) this.finish(instance, "acked")
    }
  }

  nack(ids: ReadonlyArray<string>, action: NackAction): void {
    if (action === "Stop") return
    for (const id of ids) {
      const instance = this.holding(id)
      if (instance === undefined) continue
      if (action === "Skip") this.finish(instance, "skipped")
      else if (action === "Park") this.park(instance)
      else this.retryOrPark(instance)
    }
  }

  /** A tick of the service at `now`: messages past their deadline go back or are parked; a finished replay truncates. */
  tick(now: number): void {
    for (const instance of this.inFlight()) {
      if (instance.at + this.settings.messageTimeoutMilliseconds > now) continue
      this.seen.timeouts++
      this.retryOrPark(instance)
    }
    const replay = this.replay
    if (replay === undefined) return
    const held = this.instances().some(
      (i) =>
        replay.ids.has(i.id) &&
        (i.state === "inflight" || i.state === "parking" || (i.state === "pending" && (i.copy || i.retries > 0)))
    )
    if (held) return
    this.replay = undefined
    if (replay.before > this.truncatedBefore) {
      this.truncatedBefore = replay.before
      this.seen.truncations++
    }
  }

  /**
   * replayParked(stopAt): unless a replay is under way, every link from the truncation point to `stopAt` is handed
   * out again as a copy. Answers whether a replay started.
   */
  startReplay(stopAt: number | undefined): boolean {
    if (this.replay !== undefined) return false
    const end = stopAt ?? Number.MAX_SAFE_INTEGER
    const replayed = this.links.filter((l) => l.number >= this.truncatedBefore && l.number < end)
    const last = replayed[replayed.length - 1]
    this.replay = {
      before: last === undefined ? this.truncatedBefore : last.number + 1,
      ids: new Set(replayed.map((l) => l.id))
    }
    for (const link of replayed) {
      const event = [...this.source.values()].find((i) => i.id === link.id)!
      this.copies.push({ ...event, copy: true, state: "pending", retries: 0, at: 0, everFinished: false })
    }
    this.seen.replayed += replayed.length
    return true
  }

  /** Links found in the parked stream past those known: each must be a park the model expects. */
  landed(links: ReadonlyArray<Link>): void {
    for (const link of links) {
      if (link.number < this.nextLink) continue
      const instance = this.parking().find((i) => i.id === link.id)
      if (instance === undefined)
        fail(
          `${this.stream}::${this.group}: link #${link.number} to ${link.id} parked, the model parks no such message`
        )
      else this.finish(instance, "parked")
      this.links.push(link)
      this.nextLink = link.number + 1
    }
  }

  /** Every event up to here is finished in this run (the checkpoint a graceful stop writes). */
  finishedThrough(): number {
    let through = this.loadCheckpoint ?? this.startAt - 1
    for (let next = through + 1; ; next++) {
      const instance = this.source.get(next)
      if (instance === undefined || !isFinished(instance)) return through
      through = next
    }
  }

  /** A checkpoint read from the store: it may only cover events finished at some point. */
  checkpointSeen(checkpoint: number | undefined): void {
    if (checkpoint === undefined) return
    for (const instance of this.source.values())
      if (instance.position <= checkpoint && !instance.everFinished && instance.state !== "covered")
        fail(`${this.stream}::${this.group}: checkpoint ${checkpoint} passes #${instance.position}, ${instance.state}`)
  }

  /** The group started again after `checkpoint`: what lies after it waits again with no retries; copies are gone. */
  restarted(checkpoint: number | undefined): void {
    this.checkpointSeen(checkpoint)
    this.loadCheckpoint = checkpoint
    for (const instance of this.source.values()) {
      instance.retries = 0
      instance.state = checkpoint !== undefined && instance.position <= checkpoint ? "covered" : "pending"
    }
    this.copies = []
    this.replay = undefined
  }

  /** Everything the group holds finished: what draining must reach. */
  unfinished(): Array<Instance> {
    return this.instances().filter((i) => !isFinished(i))
  }

  /** Parked messages the store should count (links not truncated). */
  parkedCount(): number {
    return this.links.filter((l) => l.number >= this.truncatedBefore).length
  }

  private finish(instance: Instance, state: "acked" | "skipped" | "parked"): void {
    instance.state = state
    if (!instance.copy) instance.everFinished = true
  }

  private park(instance: Instance): void {
    instance.state = "parking"
    this.seen.parks++
  }

  private retryOrPark(instance: Instance): void {
    if (instance.retries >= this.settings.maxRetryCount) this.park(instance)
    else {
      instance.retries++
      instance.state = "pending"
    }
  }
}
