/**
 * The worker thread that parses large append bodies (offThreadParser.ts): one job at a time, answered with
 * the events packed into one transferred buffer, or the reason the body is invalid.
 */
import { parentPort } from "node:worker_threads"
import { parseAppendBody } from "../streams/appendBody.js"
import { packEvents, transferables } from "../streams/packedEvents.js"
import type { ParseJob, ParseOutcome } from "./offThreadParser.js"

const port = parentPort
if (port === null) throw new Error("appendBodyWorker runs as a worker thread")

port.on("message", (job: ParseJob) => {
  let outcome: ParseOutcome
  let transfer: Array<ArrayBuffer> = []
  try {
    const result = parseAppendBody(job.body, job.requestType, job.headerId, job.headerType)
    if (result._tag === "Invalid") {
      outcome = { id: job.id, _tag: "Invalid", message: result.message }
    } else {
      const packed = packEvents(result.events)
      outcome = { id: job.id, _tag: "Events", packed }
      transfer = transferables(packed)
    }
  } catch (error) {
    outcome = { id: job.id, _tag: "Failed", message: error instanceof Error ? error.message : String(error) }
  }
  port.postMessage(outcome, transfer)
})
