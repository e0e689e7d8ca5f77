/**
 * The simulated clients' operations as HTTP requests to the node's handler, called in-process on the
 * node's scheduler (no sockets), as the admin with Basic auth — what an AtomPub client sends (the ACL
 * actor, `acl/`, sends them as other callers, and a 401 or 403 to it is an answer, `Denied`):
 *
 * - append: `POST /streams/{s}` with an `application/vnd.eventstore.events+json` array and
 *   `ES-ExpectedVersion` → 201 + Location (first event number), 400 + CurrentVersion, 410;
 * - metadata: `POST /streams/{s}/metadata` with the bytes as the body (`application/json` for JSON
 *   metadata, `application/octet-stream` otherwise) and `ES-EventId`: stored exactly as sent;
 * - delete: `DELETE /streams/{s}` with `ES-HardDelete` → 204, 400 + CurrentVersion, 410;
 * - reads: Atom JSON feeds and entries at `embed=body` → 200, 404 (no stream, or no such event), 410.
 *
 * Client event data is JSON that the events+json form stores re-indented; the clients generate it
 * already indented the reference's way (two spaces), so the bytes stored are the bytes the model holds.
 *
 * Anything else is a failure: a 5xx (507/503: writes refused after a disk error, until the node heals), a
 * 408 or a store size-limit 400 leaves the operation indeterminate, except a 500 from a defect,
 * which — like a 401 for the admin or any other 400 for a well-formed request — no correct node gives
 * (`Unexpected`).
 */
import { Effect } from "effect"
import type { HttpRequest, Reply } from "@vellum/http"
import type { ProposedEvent } from "@vellum/storage"
import {
  currentVersion,
  describeReply,
  linkStart,
  locationEventNumber,
  parseEntry,
  parseFeed,
  replyBytes,
  replyText,
  type AtomEntry
} from "./atomReplies.js"
import {
  Denied,
  Indeterminate,
  Unexpected,
  deleted,
  type ObservedEvent,
  type ObservedEventRead,
  type ObservedStreamRead,
  type ObservedWrite,
  type ReadRequest,
  type SimStore,
  type StoreFailure
} from "./simStore.js"

/** The node's request handler with the node's services provided. */
export type NodeHandler = (request: HttpRequest) => Effect.Effect<Reply>

const Host = "127.0.0.1:2113"
const AdminAuthorization = `Basic ${Buffer.from("admin:changeit").toString("base64")}`
const EventsJson = "application/vnd.eventstore.events+json"
const AtomJson = "application/vnd.eventstore.atom+json"
const DefectReason = "Internal Server Error"

const streamPath = (stream: string): string => `/streams/${encodeURIComponent(stream)}`

/**
 * The store's size limits, reported as a validation 400 (InvalidRequest). The swarm's tiny chunks make a
 * large append not fit; the direct transport counts that InvalidRequest as indeterminate, and so does HTTP.
 */
const StoreSizeLimit = /does not fit in a chunk|exceeds the record limit|bytes; the limit is/

/** Why a reply that is none of the operation's answers failed it. */
const failureOf = (reply: Reply, what: string): StoreFailure => {
  const reason = reply.reason ?? ""
  if (reply.status === 401 || reply.status === 403) return new Denied(reply.status, challengeOf(reply))
  if (reply.status >= 500 && !reason.startsWith(DefectReason)) return new Indeterminate(`${reply.status} ${reason}`)
  if (reply.status === 408) return new Indeterminate("408 request timeout")
  if (reply.status === 400 && StoreSizeLimit.test(replyText(reply))) return new Indeterminate(`400 ${replyText(reply)}`)
  return new Unexpected(`${what}: ${describeReply(reply)}`)
}

const orFail = <A>(value: A | Unexpected): Effect.Effect<A, StoreFailure> =>
  value instanceof Unexpected ? Effect.fail(value) : Effect.succeed(value)

/** The answer to a write: a rule failure or success. */
const writeReply = (
  reply: Reply,
  what: string,
  success: () => ObservedWrite | Unexpected
): Effect.Effect<ObservedWrite, StoreFailure> => {
  if (reply.status === 400 && reply.reason === "Wrong expected EventNumber") {
    return Effect.map(orFail(currentVersion(reply)), (current): ObservedWrite => ({
      _tag: "WrongExpectedVersion",
      current
    }))
  }
  if (reply.status === 410) return Effect.succeed({ _tag: "StreamDeleted" })
  if (reply.status === 201 || reply.status === 204) return orFail(success())
  return Effect.fail(failureOf(reply, what))
}

/** Appends answer 201; the Location names the first event (of the original write, for a retry). */
const appendedAt = (reply: Reply, stream: string) => (): ObservedWrite | Unexpected => {
  if (reply.status !== 201) return new Unexpected(`an append answered ${describeReply(reply)}`)
  const first = locationEventNumber(reply, stream)
  return first instanceof Unexpected ? first : { _tag: "Appended", first, last: undefined, idempotent: undefined }
}

/** The events+json body: ids, types and data; JSON data goes in as JSON, other data as a string. */
const eventsBody = (events: ReadonlyArray<ProposedEvent>): string =>
  "[" +
  events
    .map((e) => {
      const text = Buffer.from(e.data).toString("utf8")
      return `{"eventId":${JSON.stringify(e.eventId)},"eventType":${JSON.stringify(e.eventType)},"data":${e.isJson ? text : JSON.stringify(text)}}`
    })
    .join(",") +
  "]"

/** The `WWW-Authenticate` values of a reply, joined. */
export const challengeOf = (reply: Reply): string | undefined => {
  const name = Object.keys(reply.headers).find((k) => k.toLowerCase() === "www-authenticate")
  const value = name === undefined ? undefined : reply.headers[name]
  return value === undefined ? undefined : typeof value === "string" ? value : value.join(", ")
}

/** A request to the node as the admin (what every simulated client and the operator send). */
export type AdminRequest = (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Uint8Array
) => Effect.Effect<Reply>

/** Requests with this `Authorization` header (none: anonymous). */
export const asCaller =
  (handle: NodeHandler, authorization: string | undefined): AdminRequest =>
  (method, url, headers, body) =>
    handle({
      method,
      url,
      headers: { host: Host, ...(authorization === undefined ? {} : { authorization }), ...headers },
      body
    })

export const asAdmin = (handle: NodeHandler): AdminRequest => asCaller(handle, AdminAuthorization)

/** The admin is never refused: a 401 to it is no answer a correct node gives. */
const refusalUnexpected = <A>(effect: Effect.Effect<A, StoreFailure>): Effect.Effect<A, StoreFailure> =>
  Effect.mapError(effect, (e) => (e._tag === "Denied" ? new Unexpected(`the admin was refused: ${e.reason}`) : e))

/**
 * The clients' store as the admin; with `caller` (the ACL actor's identities: its `Authorization` header,
 * undefined for anonymous) refusals are answers (`Denied`), the admin's included.
 */
export const httpStore = (handle: NodeHandler, caller?: { readonly authorization: string | undefined }): SimStore => {
  if (caller !== undefined) return callerStore(asCaller(handle, caller.authorization))
  const store = callerStore(asAdmin(handle))
  return {
    append: (stream, expected, events) => refusalUnexpected(store.append(stream, expected, events)),
    setMetadata: (stream, expected, event) => refusalUnexpected(store.setMetadata(stream, expected, event)),
    deleteStream: (stream, expected, hard) => refusalUnexpected(store.deleteStream(stream, expected, hard)),
    readStream: (request) => refusalUnexpected(store.readStream(request)),
    readEvent: (stream, eventNumber) => refusalUnexpected(store.readEvent(stream, eventNumber))
  }
}

const callerStore = (request: AdminRequest): SimStore => {
  /** The stored bytes of an event the feed shows no text for (a non-JSON event). */
  const rawData = (stream: string, entry: AtomEntry): Effect.Effect<ObservedEvent, StoreFailure> => {
    const event = (data: Uint8Array): ObservedEvent => ({
      eventNumber: entry.eventNumber,
      eventId: entry.eventId,
      eventType: entry.eventType,
      data
    })
    if (entry.data !== null) return Effect.succeed(event(Buffer.from(entry.data, "utf8")))
    return Effect.flatMap(
      request("GET", `${streamPath(stream)}/${entry.eventNumber}`, { accept: "application/octet-stream" }),
      (reply) =>
        reply.status === 200
          ? Effect.succeed(event(replyBytes(reply)))
          : Effect.fail(failureOf(reply, `raw data of ${stream}#${entry.eventNumber}`))
    )
  }

  const feedRead = (
    stream: string,
    direction: ReadRequest["direction"],
    reply: Reply
  ): Effect.Effect<ObservedStreamRead, StoreFailure> =>
    Effect.gen(function* () {
      const feed = yield* orFail(parseFeed(replyText(reply)))
      const next = yield* orFail(linkStart(feed, "next"))
      const previous = yield* orFail(linkStart(feed, "previous"))
      // Feeds list newest first; forward reads are compared oldest first, as the store returns them.
      const entries = direction === "forward" ? [...feed.entries].reverse() : feed.entries
      const events = yield* Effect.forEach(entries, (entry) => rawData(stream, entry))
      return {
        _tag: "Success",
        events,
        paging: { via: "feed", headOfStream: feed.headOfStream, next, previous }
      } as const
    })

  return {
    append: (stream, expected, events) =>
      Effect.flatMap(
        request(
          "POST",
          streamPath(stream),
          { "content-type": EventsJson, "es-expectedversion": String(expected) },
          Buffer.from(eventsBody(events), "utf8")
        ),
        (reply) => writeReply(reply, `append to ${stream}`, appendedAt(reply, stream))
      ),

    setMetadata: (stream, expected, event) =>
      Effect.flatMap(
        request(
          "POST",
          `${streamPath(stream)}/metadata`,
          {
            "content-type": event.isJson ? "application/json" : "application/octet-stream",
            "es-expectedversion": String(expected),
            "es-eventid": event.eventId
          },
          event.data
        ),
        (reply) => writeReply(reply, `metadata of ${stream}`, appendedAt(reply, `$$${stream}`))
      ),

    deleteStream: (stream, expected, hard) =>
      Effect.flatMap(
        request("DELETE", streamPath(stream), {
          "es-expectedversion": String(expected),
          "es-harddelete": hard ? "True" : "False"
        }),
        (reply) =>
          writeReply(reply, `delete of ${stream}`, () =>
            reply.status === 204 ? deleted : new Unexpected(`a delete answered ${describeReply(reply)}`)
          )
      ),

    readStream: ({ stream, direction, from, count }) => {
      const start = from < 0 ? "head" : String(from)
      return Effect.flatMap(
        request("GET", `${streamPath(stream)}/${start}/${direction}/${count}?embed=body`, { accept: AtomJson }),
        (reply) => {
          switch (reply.status) {
            case 200:
              return feedRead(stream, direction, reply)
            case 404:
              return Effect.succeed<ObservedStreamRead>({ _tag: "NoStream", lastEventNumber: undefined })
            case 410:
              return Effect.succeed<ObservedStreamRead>({ _tag: "StreamDeleted" })
            default:
              return Effect.fail(failureOf(reply, `read of ${stream}`))
          }
        }
      )
    },

    readEvent: (stream, eventNumber) =>
      Effect.flatMap(
        request("GET", `${streamPath(stream)}/${eventNumber < 0 ? "head" : eventNumber}?embed=body`, {
          accept: AtomJson
        }),
        (reply) => {
          switch (reply.status) {
            case 200:
              return Effect.map(
                Effect.flatMap(orFail(parseEntry(replyText(reply))), (entry) => rawData(stream, entry)),
                (event): ObservedEventRead => ({ _tag: "Success", event })
              )
            case 404:
              return Effect.succeed<ObservedEventRead>({ _tag: "Missing" })
            case 410:
              return Effect.succeed<ObservedEventRead>({ _tag: "StreamDeleted" })
            default:
              return Effect.fail(failureOf(reply, `read of ${stream}#${eventNumber}`))
          }
        }
      )
  }
}
