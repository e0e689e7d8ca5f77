// The reference's own JavaScript projection specs (EventStore/EventStore:
// src/EventStore.Projections.Core.Javascript.Tests/Specs), their behaviour replayed through our handler with a small
// stand-in for the engine: partitions chosen by partitionBy, states kept as texts, the live partition reused.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { HandlerItem, HandlerOutcome, ProjectionHandler } from "../src/engine/ProjectionHandler.js"
import type { SourceItem } from "../src/sources/SourceReader.js"
import { anEvent, withProjection } from "./executionSupport.js"

interface Step {
  readonly partition: string | undefined
  readonly outcome?: HandlerOutcome
  readonly states: ReadonlyMap<string, string>
}

const drive = (handler: ProjectionHandler, items: ReadonlyArray<SourceItem>, partitioned: boolean, biState: boolean) =>
  Effect.gen(function* () {
    const stored = new Map<string, string>()
    let live: string | undefined
    const steps: Array<Step> = []
    for (const source of items) {
      const [key] = partitioned ? yield* handler.partitionsOf([source]) : [""]
      if (key === undefined) {
        steps.push({ partition: undefined, states: new Map(stored) })
        continue
      }
      const item: HandlerItem =
        key === live
          ? { source, partition: key }
          : {
              source,
              partition: key,
              state: stored.get(key) ?? "",
              ...(biState ? { shared: stored.get("") ?? "" } : {})
            }
      const [outcome] = yield* handler.process([item])
      stored.set(key, outcome.state)
      if (biState && outcome.shared !== undefined) stored.set("", outcome.shared)
      live = key
      steps.push({ partition: key, outcome, states: new Map(stored) })
    }
    return steps
  })

const parsed = (text: string | undefined): unknown => (text === undefined || text === "" ? null : JSON.parse(text))

describe("account-balancer (bi-state, partitionBy, filterBy, transformBy)", () => {
  const source = `options({ biState: true });
    fromCategory("transaction")
      .partitionBy(function (e) {
        if (e.eventType === "header") return "description";
        if (e.body.accountId.startsWith("ESDBB")) return e.body.accountId;
        return undefined;
      })
      .when({
        $init: function () { return { balance: 0 }; },
        $initShared: function () { return { numberOfAccounts: 0, totalBalance: 0 }; },
        $created: function (s, e) { if (e.partition !== "description") { s[1].numberOfAccounts++; } else { s[0] = null; } },
        "header": function (s, e) { s[1].description = e.body.description; },
        "credit": function (s, e) {
          if (e.partition === "") return {};
          s[0].balance += e.body.amount; s[0].credit = e.body.amount; s[0].debit = undefined;
          s[0].description = s[1].description; s[1].totalBalance += e.body.amount; return s;
        },
        "debit": function (s, e) {
          if (e.partition === "") return {};
          s[0].balance -= e.body.amount; s[0].credit = undefined; s[0].debit = e.body.amount;
          s[0].description = s[1].description; s[1].totalBalance -= e.body.amount; return s;
        }
      })
      .filterBy(function (s) { return s.partition !== "description"; })
      .transformBy(function (s) { s.partition = undefined; })
      .outputTo("total-balance", "account-balance-{0}");`

  const t = (stream: string, n: number, type: string, data: object) =>
    anEvent(stream, n, type, data, { category: "transaction" })
  const events = [
    t("transaction-1", 0, "header", { description: "transfer from alice" }),
    t("transaction-1", 1, "debit", { accountId: "External-01", amount: 1000 }),
    t("transaction-1", 2, "credit", { accountId: "ESDBB-01", amount: 1000 }),
    t("transaction-2", 0, "header", { description: "transfer to savings" }),
    t("transaction-2", 1, "debit", { accountId: "ESDBB-01", amount: 300 }),
    t("transaction-2", 2, "credit", { accountId: "ESDBB-S01", amount: 300 }),
    t("transaction-3", 0, "header", { description: "bill payment" }),
    t("transaction-3", 1, "debit", { accountId: "ESDBB-01", amount: 150 }),
    t("transaction-3", 2, "credit", { accountId: "EXTERNAL-02", amount: 150 })
  ]

  it("keeps the totals in the shared state and each account's balance in its partition", async () => {
    const { definition, steps } = await withProjection(source, ({ definition, handler }) =>
      Effect.map(drive(handler, events, true, true), (steps) => ({ definition, steps }))
    )
    expect(definition).toMatchObject({
      categories: ["transaction"],
      events: ["header", "credit", "debit"],
      byCustomPartitions: true,
      options: {
        isBiState: true,
        definesStateTransform: true,
        producesResults: true,
        resultStreamName: "total-balance"
      }
    })
    const view = steps.map((step) =>
      step.partition === undefined
        ? "skip"
        : {
            partition: step.partition,
            created: step.outcome?.created,
            shared: parsed(step.states.get("")),
            own: parsed(step.states.get(step.partition))
          }
    )
    expect(view).toEqual([
      {
        partition: "description",
        created: true,
        shared: { numberOfAccounts: 0, totalBalance: 0, description: "transfer from alice" },
        own: null
      },
      "skip",
      {
        partition: "ESDBB-01",
        created: true,
        shared: { numberOfAccounts: 1, totalBalance: 1000, description: "transfer from alice" },
        own: { description: "transfer from alice", balance: 1000, credit: 1000 }
      },
      {
        partition: "description",
        created: true,
        shared: { numberOfAccounts: 1, totalBalance: 1000, description: "transfer to savings" },
        own: null
      },
      {
        partition: "ESDBB-01",
        created: false,
        shared: { numberOfAccounts: 1, totalBalance: 700, description: "transfer to savings" },
        own: { description: "transfer to savings", balance: 700, debit: 300 }
      },
      {
        partition: "ESDBB-S01",
        created: true,
        shared: { numberOfAccounts: 2, totalBalance: 1000, description: "transfer to savings" },
        own: { description: "transfer to savings", balance: 300, credit: 300 }
      },
      {
        partition: "description",
        created: true,
        shared: { numberOfAccounts: 2, totalBalance: 1000, description: "bill payment" },
        own: null
      },
      {
        partition: "ESDBB-01",
        created: false,
        shared: { numberOfAccounts: 2, totalBalance: 850, description: "bill payment" },
        own: { balance: 550, debit: 150, description: "bill payment" }
      },
      "skip"
    ])
    // The filter sees the pair (no `partition` member: it passes); the transform returns nothing: no result.
    expect(steps.filter((s) => s.outcome?.stateChanged).map((s) => s.outcome?.result)).toEqual([null, null, null, null])
  })
})

describe("by-category (links from fromAll with $includeLinks)", () => {
  const source = `options({ $includeLinks: true });
    fromAll().when({ $any: (s, e) => { const stream = e.streamId.split("-")[0]; linkTo(stream, e); } });`

  it("links every event into the stream named by its category", async () => {
    const events = ["category1-a", "category2-a", "category1-b"].flatMap((stream) =>
      ["t1", "t2", "t3"].map((type, n) => anEvent(stream, n, type, {}, { metadata: "{}" }))
    )
    const { definition, steps } = await withProjection(source, ({ definition, handler }) =>
      Effect.map(drive(handler, events, false, false), (steps) => ({ definition, steps }))
    )
    expect(definition).toMatchObject({
      allStreams: true,
      allEvents: true,
      options: { includeLinks: true, definesFold: true }
    })
    const links = new Map<string, Array<string>>()
    for (const write of steps.flatMap((s) => s.outcome?.emitted ?? [])) {
      expect(write.eventType).toBe("$>")
      links.set(write.stream, [...(links.get(write.stream) ?? []), write.data])
    }
    expect(Object.fromEntries(links)).toEqual({
      category1: ["0@category1-a", "1@category1-a", "2@category1-a", "0@category1-b", "1@category1-b", "2@category1-b"],
      category2: ["0@category2-a", "1@category2-a", "2@category2-a"]
    })
  })
})

describe("event-data (what a handler sees of an event)", () => {
  const source = `fromAll().when({
    $init: function () { return { events: [] }; },
    "baz": function (state, event) {
      state.events.push({ streamId: event.streamId, sequenceNumber: event.sequenceNumber, eventId: event.eventId,
        eventType: event.eventType, data: event.data, metadata: event.metadata });
    }
  })`

  it("keeps the stream, number, id, type, data and metadata of each event", async () => {
    const events = [
      anEvent("foo", 0, "baz", { something: "one" }, { eventId: "81f23435-6b5b-47c6-84fd-b9d1a64916d8" }),
      anEvent(
        "foo",
        1,
        "baz",
        { something: "two" },
        { eventId: "100bd839-2b31-4908-99ef-6af615f51648", metadata: '{"test":1}' }
      )
    ]
    const steps = await withProjection(source, ({ handler }) => drive(handler, events, false, false))
    const first = {
      streamId: "foo",
      sequenceNumber: 0,
      eventId: "81f23435-6b5b-47c6-84fd-b9d1a64916d8",
      eventType: "baz",
      data: { something: "one" },
      metadata: null
    }
    expect(steps.map((s) => parsed(s.outcome?.state))).toEqual([
      { events: [first] },
      {
        events: [
          first,
          {
            streamId: "foo",
            sequenceNumber: 1,
            eventId: "100bd839-2b31-4908-99ef-6af615f51648",
            eventType: "baz",
            data: { something: "two" },
            metadata: { test: 1 }
          }
        ]
      }
    ])
    expect(steps[0].outcome?.created).toBe(true)
  })
})
