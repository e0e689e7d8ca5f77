import { defaultGroupSettings, type GroupSettings } from "../src/config/GroupSettings.js"
import { eventNumberOrder, Group, type GroupEffect, type GroupEvent, type GroupStart } from "../src/group/index.js"

export interface TestEvent extends GroupEvent<number> {
  readonly stream: string
  /** Handed back from the parked stream (the group hands `E` back untouched, so tests can tell). */
  readonly replayed?: boolean
}

/** Event number `n` of the group's stream, pinned to its own stream by default. */
export const ev = (n: number, pinStream = "s", correlationId?: string): TestEvent => ({
  id: `e${n}`,
  position: n,
  pinStream,
  correlationId,
  stream: "s"
})

export const evs = (from: number, to: number): Array<TestEvent> => {
  const out: Array<TestEvent> = []
  for (let n = from; n <= to; n++) out.push(ev(n))
  return out
}

export type Effect = GroupEffect<number, TestEvent>

export const makeGroup = (
  settings: Partial<GroupSettings> = {},
  start: GroupStart<number> = { _tag: "At", position: 0 }
): Group<number, TestEvent> => new Group({ ...defaultGroupSettings, ...settings }, eventNumberOrder, start)

/** A group whose source (events 0..last) is read, so it is live with all of them buffered. */
export const liveGroup = (last: number, settings: Partial<GroupSettings> = {}): Group<number, TestEvent> => {
  const group = makeGroup({ bufferSize: 1000, ...settings })
  group.start(0)
  group.readCompleted({ events: evs(0, last), endOfStream: true }, 0)
  return group
}

export const ofTag = <T extends Effect["_tag"]>(effects: ReadonlyArray<Effect>, tag: T) =>
  effects.filter((e): e is Extract<Effect, { _tag: T }> => e._tag === tag)

export const ids = (deliveries: ReadonlyArray<{ event: TestEvent }>) => deliveries.map((d) => d.event.id)
