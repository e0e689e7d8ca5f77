/**
 * Every route of the stream API as data for the pipeline: appends, deletes, feeds,
 * single events, metadata, `$all` (plain and filtered) and the trailing-slash redirects. `$all` and
 * `%24all` are one literal here (the router matches decoded segments). Stream routes check the stream
 * ACL in their handlers (`access: "handler"`); the redirects are anonymous, as upstream. The four writes are
 * marked `writes`: only the leader serves them.
 */
import type { RouteDef } from "../Route.js"
import {
  answerAppendIdempotent,
  answerAppendMetadata,
  answerAppendToStream,
  appendIdempotent,
  appendMetadata,
  appendToStream,
  deleteStream
} from "./append.js"
import { AtomCodecs, AtomCodecsWithoutBatches, FeedCodecs, SingleEventCodecs } from "./mediaTypes.js"
import {
  answerAllBackward,
  answerAllFilteredBackward,
  answerAllFilteredForward,
  answerAllForward,
  readAllBackward,
  readAllFilteredBackward,
  readAllFilteredForward,
  readAllForward
} from "./readAll.js"
import { answerMetadataEvent, answerStreamEvent, readStreamEvent, readMetadataEvent } from "./readEvent.js"
import {
  answerMetastreamBackward,
  answerMetastreamForward,
  answerStreamBackward,
  answerStreamForward,
  readMetastreamBackward,
  readMetastreamForward,
  readStreamBackward,
  readStreamForward
} from "./readFeed.js"
import { redirectWithoutSlash } from "./redirects.js"
import type { StreamRouteRequirements } from "./requirements.js"

type StreamRoute = RouteDef<StreamRouteRequirements>

/** A read route; one with an `answer` (plain form, Answer.ts) has `handlerOf(answer)` as its `handle`. */
const get = (
  path: string,
  responseCodecs: ReadonlyArray<string>,
  handle: StreamRoute["handle"],
  answer?: StreamRoute["answer"]
): StreamRoute => ({
  method: "GET",
  path,
  access: "handler",
  responseCodecs,
  handle,
  ...(answer !== undefined ? { answer } : {})
})

const redirect = (method: StreamRoute["method"], path: string, requestCodecs?: ReadonlyArray<string>): StreamRoute => ({
  method,
  path,
  access: "anonymous",
  ...(requestCodecs !== undefined ? { requestCodecs } : {}),
  responseCodecs: path.startsWith("/streams/$all") ? FeedCodecs : AtomCodecs,
  handle: redirectWithoutSlash
})

type Read = readonly [StreamRoute["handle"], NonNullable<StreamRoute["answer"]>]

const allFeeds = (base: string, backward: Read, forward: Read): ReadonlyArray<StreamRoute> => [
  get(`${base}?embed={embed}`, FeedCodecs, ...backward),
  get(`${base}/{position}/{count}?embed={embed}`, FeedCodecs, ...backward),
  get(`${base}/{position}/backward/{count}?embed={embed}`, FeedCodecs, ...backward),
  get(`${base}/{position}/forward/{count}?embed={embed}`, FeedCodecs, ...forward)
]

const streamBackward: Read = [readStreamBackward, answerStreamBackward]
const metastreamBackward: Read = [readMetastreamBackward, answerMetastreamBackward]

export const streamRoutes: ReadonlyArray<StreamRoute> = [
  // Writes
  {
    method: "POST",
    path: "/streams/{stream}",
    access: "handler",
    writes: true,
    requestCodecs: AtomCodecs,
    responseCodecs: AtomCodecs,
    handle: appendToStream,
    answer: answerAppendToStream
  },
  {
    method: "DELETE",
    path: "/streams/{stream}",
    access: "handler",
    writes: true,
    responseCodecs: AtomCodecs,
    handle: deleteStream
  },
  {
    method: "POST",
    path: "/streams/{stream}/incoming/{guid}",
    access: "handler",
    writes: true,
    requestCodecs: AtomCodecsWithoutBatches,
    responseCodecs: AtomCodecsWithoutBatches,
    handle: appendIdempotent,
    answer: answerAppendIdempotent
  },
  {
    method: "POST",
    path: "/streams/{stream}/metadata",
    access: "handler",
    writes: true,
    requestCodecs: AtomCodecs,
    responseCodecs: AtomCodecs,
    handle: appendMetadata,
    answer: answerAppendMetadata
  },

  // Trailing-slash redirects
  redirect("POST", "/streams/{stream}/", AtomCodecs),
  redirect("DELETE", "/streams/{stream}/"),
  redirect("GET", "/streams/{stream}/"),
  redirect("POST", "/streams/{stream}/metadata/", AtomCodecs),
  redirect("GET", "/streams/{stream}/metadata/"),
  redirect("GET", "/streams/$all/"),

  // Stream reads
  get("/streams/{stream}?embed={embed}", FeedCodecs, ...streamBackward),
  get("/streams/{stream}/{event}?embed={embed}", SingleEventCodecs, readStreamEvent, answerStreamEvent),
  get("/streams/{stream}/{event}/{count}?embed={embed}", FeedCodecs, ...streamBackward),
  get("/streams/{stream}/{event}/backward/{count}?embed={embed}", FeedCodecs, ...streamBackward),
  get("/streams/{stream}/{event}/forward/{count}?embed={embed}", FeedCodecs, readStreamForward, answerStreamForward),

  // Metadata reads
  get("/streams/{stream}/metadata?embed={embed}", SingleEventCodecs, readMetadataEvent, answerMetadataEvent),
  get("/streams/{stream}/metadata/{event}?embed={embed}", SingleEventCodecs, readMetadataEvent, answerMetadataEvent),
  get("/streams/{stream}/metadata/{event}/{count}?embed={embed}", FeedCodecs, ...metastreamBackward),
  get("/streams/{stream}/metadata/{event}/backward/{count}?embed={embed}", FeedCodecs, ...metastreamBackward),
  get(
    "/streams/{stream}/metadata/{event}/forward/{count}?embed={embed}",
    FeedCodecs,
    readMetastreamForward,
    answerMetastreamForward
  ),

  // $all
  ...allFeeds("/streams/$all", [readAllBackward, answerAllBackward], [readAllForward, answerAllForward]),
  ...allFeeds(
    "/streams/$all/filtered",
    [readAllFilteredBackward, answerAllFilteredBackward],
    [readAllFilteredForward, answerAllFilteredForward]
  )
]

/**
 * The scavenge history's two read routes, which the reference serves from its admin controller, so they stay
 * when AtomPub is off (and go with the admin endpoints under `DisableAdminUi`): `$scavenges` itself, and a
 * backward page of one run's `$scavenges-{scavengeId}`. Not for use beside `streamRoutes`, whose
 * `/streams/{stream}/{event}/forward/{count}` the second template would shadow for `$scavenges`.
 */
export const scavengeHistoryRoutes: ReadonlyArray<StreamRoute> = [
  get("/streams/$scavenges?embed={embed}", FeedCodecs, (input) =>
    readStreamBackward({ ...input, params: { ...input.params, stream: "$scavenges" } })
  ),
  get("/streams/$scavenges/{scavengeId}/{event}/{count}?embed={embed}", FeedCodecs, (input) =>
    readStreamBackward({
      ...input,
      params: { ...input.params, stream: `$scavenges-${input.params["scavengeId"] ?? ""}` }
    })
  )
]
