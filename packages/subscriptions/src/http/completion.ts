/**
 * The answers of create, update, delete and replayParked: the reference's completion message as a document
 * (`{correlationId, reason, result, label}`, the label being the message's own as the reference names it),
 * with the status its controller gives each result. Create and update also send `Location`, the group's URL
 * as given (not escaped, no query), on every status.
 */
import { Effect } from "effect"
import type { Reply } from "@vellum/http"
import { randomUuid } from "@vellum/storage"
import type { ManageResult } from "../service/Subscriptions.js"
import { documentOf } from "./documents.js"

export type Operation = "create" | "update" | "delete" | "replayParked"

/** The reference's completion message per operation: its class name and its internal label. */
const messages: Readonly<Record<Operation, string>> = {
  create: "CreatePersistentSubscriptionToStreamCompleted",
  update: "UpdatePersistentSubscriptionToStreamCompleted",
  delete: "DeletePersistentSubscriptionToStreamCompleted",
  replayParked: "ReplayMessagesReceived"
}

const successStatus: Readonly<Record<Operation, number>> = {
  create: 201,
  update: 200,
  delete: 200,
  replayParked: 200
}

const reasonPhrases: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  400: "Bad Request",
  404: "Not Found",
  409: "Conflict",
  503: "Service Unavailable"
}

/** The status of a result (NotReady: the groups are not running here, as a follower's forward failing). */
export const completionStatus = (operation: Operation, result: ManageResult): number => {
  switch (result._tag) {
    case "Success":
      return successStatus[operation]
    case "AlreadyExists":
      return 409
    case "DoesNotExist":
      return 404
    case "Fail":
      return 400
    case "NotReady":
      return 503
  }
}

/** `<base>/subscriptions/<s>/<g>`, raw as the reference writes it. */
export const groupLocation = (baseUrl: string, stream: string, group: string): string =>
  `${baseUrl}/subscriptions/${stream}/${group}`

export const completionReply = (
  operation: Operation,
  result: ManageResult,
  responseType: string,
  location: string | undefined
): Effect.Effect<Reply> =>
  Effect.map(randomUuid, (correlationId) => {
    const status = completionStatus(operation, result)
    const message = messages[operation]
    return documentOf(
      status,
      reasonPhrases[status] ?? "",
      responseType,
      message,
      {
        correlationId,
        reason: result._tag === "Success" ? "" : result.reason,
        result: result._tag,
        label: `CoreMessage-Client-${message}`
      },
      {},
      location === undefined ? {} : { Location: location }
    )
  })
