/**
 * A driver for one group as the service will drive it, over a stream held in memory, checked step by step
 * against a reference model: a map of event → state. The driver answers reads and park writes when told
 * to, reports appends in order, keeps the last durable checkpoint, and can crash and restart the group.
 */
import { expect } from "vitest"
import type { GroupSettings } from "../src/config/GroupSettings.js"
import type { Delivery, Group, NackAction } from "../src/group/index.js"
import { type Effect, makeGroup, type TestEvent } from "./groupFixtures.js"

type State = "pending" | "parking" | "acked" | "skipped" | "parked"

/** An event of the source, or a copy of a parked one being replayed. */
interface ModelEvent {
  state: State
  /** Retries since the group last started: the retry count its next delivery must carry. */
  retries: number
  /** Finished (acked, skipped, durably parked) at some point, in this run of the group or an earlier one. */
  everFinished: boolean
}

interface Held {
  readonly at: number
  readonly record: ModelEvent
  readonly replay: boolean
  /** The connection it was delivered to; undefined when pulled, or delivered to a long-poll since answered. */
  readonly consumer?: string | undefined
}

const finished = (s: State) => s === "acked" || s === "skipped" || s === "parked"

export class ModelDriver {
  readonly source: Array<TestEvent> = []
  readonly parkedStream: Array<string> = []
  readonly modelParked = new Set<string>()
  checkpoint: number | undefined
  now = 0
  /** How often each kind of thing happened, so the test can show its histories reach every case. */
  readonly seen = {
    deliveries: 0,
    redeliveries: 0,
    timeouts: 0,
    parks: 0,
    checkpoints: 0,
    restarts: 0,
    waits: 0,
    connectionDeliveries: 0,
    drops: 0,
    replayed: 0
  }
  private group!: Group<number, TestEvent>
  private readonly model = new Map<string, ModelEvent>()
  /** What consumers hold: delivered, not acked or nacked, with when it was handed out. */
  private readonly held = new Map<string, Held>()
  /** Parked events being replayed (the driver replays an id only while it has no copy out). */
  private readonly copies = new Map<string, ModelEvent>()
  private pendingRead: Extract<Effect, { _tag: "Read" }> | undefined
  private notifications: Array<TestEvent> = []
  private pendingParks: Array<Held> = []
  private expectedParks = new Set<string>()
  private waiter: string | undefined
  private waiters = 0
  /** Connected consumers (as a TCP-like connection would be) and how many messages each may hold. */
  private readonly connections = new Map<string, number>()

  constructor(
    private readonly settings: GroupSettings,
    initial: number
  ) {
    for (let i = 0; i < initial; i++) this.addToSource()
    this.boot()
  }

  heldIds(): Array<string> {
    return [...this.held.keys()]
  }

  append(count: number): void {
    for (let i = 0; i < count; i++) this.notifications.push(this.addToSource())
  }

  notify(): void {
    const event = this.notifications.shift()
    if (event !== undefined) this.step(this.group.appended(event, this.now))
  }

  answerRead(): void {
    const read = this.pendingRead
    if (read === undefined) return
    this.pendingRead = undefined
    const from = read.from._tag === "At" ? read.from.position : read.from.position + 1
    const events = this.source.slice(from, from + read.count)
    this.step(this.group.readCompleted({ events, endOfStream: from + read.count >= this.source.length }, this.now))
  }

  pull(count: number): void {
    const { messages, effects } = this.group.pull(count, this.now)
    expect(messages.length).toBeLessThanOrEqual(count)
    this.delivered(messages)
    this.step(effects)
  }

  wait(count: number): void {
    if (this.waiter !== undefined) return
    const name = `w${this.waiters++}`
    this.join(name, count, () => (this.waiter = name))
  }

  connect(maxInFlight: number): void {
    const name = `c${this.waiters++}`
    this.join(name, maxInFlight, () => this.connections.set(name, maxInFlight))
  }

  /** A connection drops: what it held goes back to be retried (or parked). */
  drop(pick: number): void {
    const names = [...this.connections.keys()]
    if (names.length === 0) return
    const name = names[pick % names.length]!
    this.connections.delete(name)
    for (const [id, h] of this.held) {
      if (h.consumer !== name) continue
      this.held.delete(id)
      this.seen.drops++
      this.retryOrPark(id, h.record)
    }
    this.step(this.group.disconnect(name, true, this.now))
  }

  /** A consumer joins unless maxSubscriberCount consumers are there already. */
  private join(name: string, maxInFlight: number, joined: () => void): void {
    const max = this.settings.maxSubscriberCount
    const present = this.connections.size + (this.waiter === undefined ? 0 : 1)
    const effects = this.group.connect(name, maxInFlight, this.now)
    expect(effects === "Full").toBe(max > 0 && present >= max)
    if (effects === "Full") return
    joined()
    this.step(effects)
  }

  stopWaiting(): void {
    if (this.waiter === undefined) return
    const name = this.waiter
    this.waiter = undefined
    this.step(this.group.disconnect(name, false, this.now))
  }

  ack(ids: ReadonlyArray<string>): void {
    for (const id of ids) {
      const h = this.held.get(id)
      if (h === undefined) continue
      this.held.delete(id)
      this.finish(id, h, "acked")
    }
    this.step(this.group.ack(ids, this.now))
  }

  nack(ids: ReadonlyArray<string>, action: NackAction): void {
    if (action !== "Stop") {
      for (const id of ids) {
        const h = this.held.get(id)
        if (h === undefined) continue
        this.held.delete(id)
        if (action === "Skip") this.finish(id, h, "skipped")
        else if (action === "Park") this.expectPark(id, h.record)
        else this.retryOrPark(id, h.record)
      }
    }
    this.step(this.group.nack(ids, action, this.now))
  }

  tick(advance: number): void {
    this.now += advance
    for (const [id, h] of this.held) {
      if (h.at + this.settings.messageTimeoutMilliseconds > this.now) continue
      this.held.delete(id)
      this.seen.timeouts++
      this.retryOrPark(id, h.record)
    }
    this.step(this.group.tick(this.now))
  }

  confirmPark(): void {
    const h = this.pendingParks.shift()
    if (h === undefined) return
    const id = this.idOf(h.record)
    this.writeParked(id, h)
    this.step(this.group.parked([id], this.now))
  }

  /** Replay the parked stream: each parked id without a copy out is handed to the group again. */
  replay(): void {
    const ids = [...new Set(this.parkedStream)].filter((id) => !this.copies.has(id))
    expect(this.group.startReplay()).toBe(true)
    for (const id of ids) this.copies.set(id, { state: "pending", retries: 0, everFinished: false })
    this.seen.replayed += ids.length
    const events = ids.map((id) => ({ ...this.source[Number(id.slice(1))]!, replayed: true }))
    this.step(this.group.replayed(events, true, this.now))
  }

  /** A crash: what was not durable is gone (a park write in progress may have landed), and the group restarts. */
  restart(parksLanded: boolean): void {
    for (const h of this.pendingParks) if (parksLanded) this.writeParked(this.idOf(h.record), h)
    this.copies.clear()
    this.connections.clear()
    this.seen.restarts++
    this.boot()
  }

  /** Consumers keep pulling and acking, and the driver answers everything, until all is finished. */
  drain(): void {
    this.stopWaiting()
    for (let round = 0; round < 10_000 && !this.allFinished(); round++) {
      while (this.notifications.length > 0) this.notify()
      this.answerRead()
      while (this.pendingParks.length > 0) this.confirmPark()
      this.pull(100)
      this.ack(this.heldIds())
      this.tick(1)
    }
    expect(this.allFinished()).toBe(true)
    expect(new Set(this.parkedStream)).toEqual(this.modelParked)
  }

  private allFinished(): boolean {
    const sourceDone = this.source.every((e) => finished(this.model.get(e.id)!.state))
    return sourceDone && this.pendingParks.length === 0 && this.copies.size === 0
  }

  private addToSource(): TestEvent {
    const n = this.source.length
    const event = { id: `e${n}`, position: n, pinStream: `s${n % 3}`, stream: "s" }
    this.source.push(event)
    this.model.set(event.id, { state: "pending", retries: 0, everFinished: false })
    return event
  }

  private boot(): void {
    const c = this.checkpoint
    for (const e of this.source) {
      const m = this.model.get(e.id)!
      m.retries = 0
      if (c === undefined || e.position > c) m.state = "pending"
      else expect(finished(m.state)).toBe(true)
    }
    this.held.clear()
    this.pendingRead = undefined
    this.notifications = []
    this.pendingParks = []
    this.waiter = undefined
    this.group = makeGroup(
      this.settings,
      c === undefined ? { _tag: "At", position: 0 } : { _tag: "After", position: c }
    )
    this.step(this.group.start(this.now))
  }

  private idOf(record: ModelEvent): string {
    for (const [id, r] of this.copies) if (r === record) return id
    for (const [id, r] of this.model) if (r === record) return id
    throw new Error("no such record")
  }

  private finish(id: string, h: Held, state: "acked" | "skipped" | "parked"): void {
    h.record.state = state
    if (h.replay) this.copies.delete(id)
    else h.record.everFinished = true
  }

  private expectPark(id: string, record: ModelEvent): void {
    record.state = "parking"
    this.expectedParks.add(id)
  }

  private retryOrPark(id: string, record: ModelEvent): void {
    if (record.retries >= this.settings.maxRetryCount) this.expectPark(id, record)
    else record.retries++
  }

  private writeParked(id: string, h: Held): void {
    this.parkedStream.push(id)
    this.modelParked.add(id)
    this.finish(id, h, "parked")
  }

  private delivered(deliveries: ReadonlyArray<Delivery<TestEvent>>, consumer?: string): void {
    for (const { event, retryCount } of deliveries) {
      const replay = event.replayed === true
      const m = replay ? this.copies.get(event.id)! : this.model.get(event.id)!
      expect(this.held.has(event.id), `${event.id} delivered while in flight`).toBe(false)
      expect(m.state, `${event.id} delivered again in the same run`).toBe("pending")
      if (!replay && m.everFinished && this.checkpoint !== undefined)
        expect(event.position, `${event.id} finished before the checkpoint`).toBeGreaterThan(this.checkpoint)
      expect(retryCount).toBe(m.retries)
      this.held.set(event.id, { at: this.now, record: m, replay, consumer })
      this.seen.deliveries++
      if (retryCount > 0 || m.everFinished) this.seen.redeliveries++
    }
  }

  private step(effects: ReadonlyArray<Effect>): void {
    let answered: string | undefined
    for (const effect of effects) {
      switch (effect._tag) {
        case "Read":
          expect(this.pendingRead).toBeUndefined()
          this.pendingRead = effect
          break
        case "WriteCheckpoint": {
          const p = effect.position
          if (this.checkpoint !== undefined) expect(p).toBeGreaterThan(this.checkpoint)
          for (const e of this.source.slice(0, p + 1)) expect(finished(this.model.get(e.id)!.state)).toBe(true)
          this.checkpoint = p
          this.seen.checkpoints++
          break
        }
        case "Park":
          expect(this.expectedParks.delete(effect.event.id), `unexpected park of ${effect.event.id}`).toBe(true)
          this.pendingParks.push(this.parkingRecord(effect.event))
          this.seen.parks++
          break
        case "Deliver": {
          const consumer = effect.consumer
          if (consumer !== this.waiter) {
            const max = this.connections.get(consumer)
            expect(max, `delivered to ${consumer}, not connected`).toBeDefined()
            this.seen.connectionDeliveries++
            this.delivered(effect.messages, consumer)
            expect([...this.held.values()].filter((h) => h.consumer === consumer).length).toBeLessThanOrEqual(max!)
            break
          }
          this.seen.waits++
          this.delivered(effect.messages)
          this.waiter = undefined
          answered = consumer
          break
        }
        case "StopRequested":
          break
      }
    }
    expect([...this.expectedParks]).toEqual([])
    // A long-poll request answered leaves once every effect of this step is taken in.
    if (answered !== undefined) return this.step(this.group.disconnect(answered, false, this.now))
    this.compareWithModel()
  }

  private parkingRecord(event: TestEvent): Held {
    const replay = event.replayed === true
    const record = replay ? this.copies.get(event.id)! : this.model.get(event.id)!
    expect(record.state).toBe("parking")
    return { at: this.now, record, replay }
  }

  /** What the group holds agrees with the model: what is out, and how far everything is finished. */
  private compareWithModel(): void {
    const stats = this.group.stats()
    const records = [...this.model.values(), ...this.copies.values()]
    const parking = records.filter((m) => m.state === "parking").length
    expect(stats.outstandingMessagesCount).toBe(this.held.size + parking)
    let prefix = -1
    while (prefix + 1 < this.source.length && finished(this.model.get(this.source[prefix + 1]!.id)!.state)) prefix++
    expect(stats.finishedThrough ?? -1).toBe(prefix)
  }
}
