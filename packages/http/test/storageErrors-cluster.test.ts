/**
 * A clustered store's refusals as HTTP replies: NotLeader (a node that does not lead; routing normally
 * answers first) is 503 with its reason and Retry-After, CommitTimeout (outcome unknown) the timeout reply
 * a WriteTimeout gets.
 */
import { describe, it, expect } from "vitest"
import { CommitTimeout, NotLeader, WriteTimeout } from "@vellum/storage"
import { storageErrorReply } from "../src/storageErrors.js"

describe("storage errors of a clustered store", () => {
  it("NotLeader is 503 with the reason as body and a Retry-After", () => {
    const reply = storageErrorReply(new NotLeader({ message: "this node is not the leader" }))
    expect(reply.status).toBe(503)
    expect(reply.headers["Retry-After"]).toBeDefined()
    expect(reply.body).toBe("this node is not the leader\n")
  })

  it("CommitTimeout is answered as a write timeout", () => {
    const reply = storageErrorReply(new CommitTimeout({ message: "not on a quorum in time" }))
    const timeout = storageErrorReply(new WriteTimeout({ timeoutMillis: 2000 }))
    expect(reply.status).toBe(timeout.status)
    expect(reply.reason).toBe(timeout.reason)
  })
})
