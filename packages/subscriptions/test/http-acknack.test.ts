import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { UserAuth, withNode } from "./httpHarness.js"

const A = "00000000-0000-4000-8000-00000000000a"
const B = "00000000-0000-4000-8000-00000000000b"

describe("acks and nacks", () => {
  it("ack by id and by ids: 202, no body, no Content-Type, even for a group that does not exist", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const one = yield* node.request("POST", `/subscriptions/orders/nope/ack/${A}`, {
          auth: UserAuth,
          headers: { "Content-Type": "application/json" },
          body: "{}"
        })
        expect(one.status).toBe(202)
        expect(one.body ?? "").toBe("")
        expect(Object.keys(one.headers).map((h) => h.toLowerCase())).not.toContain("content-type")
        const many = yield* node.request("POST", `/subscriptions/orders/g1/ack?ids=${A},{${B.toUpperCase()}}`, {
          auth: UserAuth
        })
        expect(many.status).toBe(202)
        expect(node.fake.calls).toEqual([
          { op: "ack", stream: "orders", group: "nope", ids: [A] },
          { op: "ack", stream: "orders", group: "g1", ids: [A, B] }
        ])
      })
    ))

  it("refuses an id that is not a GUID, with the reason in the status line", () =>
    withNode((node) =>
      Effect.gen(function* () {
        for (const url of [
          "/subscriptions/orders/g1/ack/nope",
          `/subscriptions/orders/g1/ack?ids=${A},nope`,
          "/subscriptions/orders/g1/ack",
          "/subscriptions/orders/g1/nack/123",
          `/subscriptions/orders/g1/nack?ids=${A},&action=park`
        ]) {
          const reply = yield* node.request("POST", url, { auth: UserAuth })
          expect(reply.status).toBe(400)
          expect(reply.reason).toBe("messageid should be a properly formed guid")
          expect(reply.body ?? "").toBe("")
        }
        expect(node.fake.calls).toEqual([])
      })
    ))

  it("nack actions: park, retry, skip and stop in any case; anything else or none retries", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const cases: ReadonlyArray<readonly [string, string]> = [
          ["?action=park", "Park"],
          ["?action=PARK", "Park"],
          ["?action=Skip", "Skip"],
          ["?action=stop", "Stop"],
          ["?action=retry", "Retry"],
          ["?action=Retyr", "Retry"],
          ["?action=", "Retry"],
          ["", "Retry"]
        ]
        for (const [query, action] of cases) {
          const reply = yield* node.request("POST", `/subscriptions/orders/g1/nack/${A}${query}`, { auth: UserAuth })
          expect(reply.status).toBe(202)
          expect(node.fake.calls.at(-1)).toEqual({ op: "nack", stream: "orders", group: "g1", ids: [A], action })
        }
        yield* node.request("POST", `/subscriptions/orders/g1/nack?ids=${A},${B}&action=skip`, { auth: UserAuth })
        expect(node.fake.calls.at(-1)).toEqual({
          op: "nack",
          stream: "orders",
          group: "g1",
          ids: [A, B],
          action: "Skip"
        })
      })
    ))

  it("need read access to the stream", () =>
    withNode((node) =>
      Effect.gen(function* () {
        node.deny.add("user|orders|$r")
        expect((yield* node.request("POST", `/subscriptions/orders/g1/ack/${A}`, { auth: UserAuth })).status).toBe(401)
        expect((yield* node.request("POST", `/subscriptions/orders/g1/nack/${A}`, { auth: UserAuth })).status).toBe(401)
        expect((yield* node.request("POST", `/subscriptions/orders/g1/ack/${A}`)).status).toBe(401)
        expect(node.fake.calls).toEqual([])
      })
    ))
})
