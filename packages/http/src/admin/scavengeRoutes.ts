/**
 * The node scavenge admin API over the `Scavenger` service:
 *
 *   POST   /admin/scavenge?threads=&threshold=&throttlePercent=&syncOnly=&startFromChunk=
 *   GET    /admin/scavenge/current
 *   GET    /admin/scavenge/last
 *   DELETE /admin/scavenge/{scavengeId}        (`current` stops whatever runs)
 *   POST   /admin/mergeindexes
 *
 * All are `$ops`/`$admins` (a bare 401 from the pipeline otherwise) with the admin codecs (text first).
 * Successes are 200 documents in the negotiated type; parameter errors are the reference's SendBadRequest
 * 400s; "already running" and "no such scavenge" are `text/plain; charset=utf-8` messages. There is no
 * `GET /admin/scavenge/{id}` upstream (the scavengeLink points at the DELETE route), so that is a 405.
 * Beyond the reference, `current` reports the running scavenge's phase and progress in JSON and XML.
 */
import { Effect } from "effect"
import { Scavenger, type LastScavenge, type ScavengeProgress } from "@vellum/scavenge"
import { reply, type Reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { badRequest, TextPlainUtf8 } from "../replies.js"
import { AdminCodecs } from "../endpoints/admin.js"
import { EMPTY_UUID } from "@vellum/cluster"
import { documentReply } from "../endpoints/replies.js"
import { renderDto, renderString, type Dto } from "./adminDocuments.js"
import { parseScavengeQuery } from "./scavengeParams.js"

/** Where a scavenge "lives": the reference's relative link, which is also the path that stops it. */
export const scavengeLink = (scavengeId: string): string => `/admin/scavenge/${scavengeId}`

/** A scavenge error: the service's reason as a text body (the reference's InProgress/NotFound envelopes). */
const messageReply = (status: 400 | 404, message: string): Reply =>
  reply(status, {
    reason: status === 400 ? "Bad Request" : "Not Found",
    headers: { "Content-Type": TextPlainUtf8 },
    body: message
  })

export const scavengeStartedDto = (scavengeId: string): Dto => ({
  type: "ScavengeResultDto",
  fields: [{ name: "ScavengeId", value: scavengeId }]
})

export const currentScavengeDto = (
  running: { readonly scavengeId: string; readonly progress: ScavengeProgress } | undefined
): Dto => {
  if (running === undefined) {
    return {
      type: "ScavengeGetCurrentResultDto",
      fields: [
        { name: "ScavengeId", value: "" },
        { name: "ScavengeLink", value: "" }
      ]
    }
  }
  const { phase, done, total } = running.progress
  return {
    type: "ScavengeGetCurrentResultDto",
    fields: [
      { name: "ScavengeId", value: running.scavengeId },
      { name: "ScavengeLink", value: scavengeLink(running.scavengeId) },
      // Vellum's addition: the text form stays the reference's ToString so scripts that parse it keep working.
      { name: "Phase", value: phase, inText: false },
      {
        name: "Progress",
        value: [
          { name: "Done", value: done },
          { name: "Total", value: total }
        ],
        inText: false
      }
    ]
  }
}

export const lastScavengeDto = (last: LastScavenge): Dto => {
  // Before any run the id is the all-zero GUID and there is nothing to link to.
  const known = last.scavengeId !== "" && last.scavengeId !== EMPTY_UUID
  return {
    type: "ScavengeGetLastResultDto",
    fields: [
      { name: "ScavengeId", value: last.scavengeId === "" ? EMPTY_UUID : last.scavengeId },
      { name: "ScavengeLink", value: known ? scavengeLink(last.scavengeId) : "" },
      { name: "ScavengeResult", value: last.result }
    ]
  }
}

export const mergeIndexesDto = (mergeIndexesId: string): Dto => ({
  type: "MergeIndexesResultDto",
  fields: [{ name: "MergeIndexesId", value: mergeIndexesId }]
})

export const startScavengeRoute: RouteDef<Scavenger> = {
  method: "POST",
  path: "/admin/scavenge",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: (input) =>
    Effect.gen(function* () {
      const parsed = parseScavengeQuery(input.query)
      if (!parsed.ok) return badRequest(parsed.message)
      const { options, requestedThreads } = parsed
      if (requestedThreads !== options.threads) {
        yield* Effect.logWarning(`Scavenge threads ${requestedThreads} is above the maximum; using ${options.threads}`)
      }
      const scavenger = yield* Scavenger
      return yield* Effect.match(scavenger.start(options), {
        onFailure: (running) => messageReply(400, running.message),
        onSuccess: ({ scavengeId }) =>
          documentReply(input.responseType, renderDto(input.responseType, scavengeStartedDto(scavengeId)))
      })
    })
}

export const currentScavengeRoute: RouteDef<Scavenger> = {
  method: "GET",
  path: "/admin/scavenge/current",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: (input) =>
    Effect.flatMap(Scavenger, (scavenger) => scavenger.current).pipe(
      Effect.map((running) =>
        documentReply(input.responseType, renderDto(input.responseType, currentScavengeDto(running)))
      )
    )
}

export const lastScavengeRoute: RouteDef<Scavenger> = {
  method: "GET",
  path: "/admin/scavenge/last",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: (input) =>
    Effect.flatMap(Scavenger, (scavenger) => scavenger.last).pipe(
      Effect.map((last) => documentReply(input.responseType, renderDto(input.responseType, lastScavengeDto(last))))
    )
}

export const stopScavengeRoute: RouteDef<Scavenger> = {
  method: "DELETE",
  path: "/admin/scavenge/{scavengeId}",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: (input) =>
    Effect.flatMap(Scavenger, (scavenger) => scavenger.stop(input.params["scavengeId"] ?? "")).pipe(
      Effect.match({
        onFailure: (missing) => messageReply(404, missing.message),
        // Only once the run has stopped (the service completes then): the id, as a bare string.
        onSuccess: ({ scavengeId }) => documentReply(input.responseType, renderString(input.responseType, scavengeId))
      })
    )
}

export const mergeIndexesRoute: RouteDef<Scavenger> = {
  method: "POST",
  path: "/admin/mergeindexes",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: (input) =>
    Effect.flatMap(Scavenger, (scavenger) => scavenger.mergeIndexes).pipe(
      Effect.map(({ mergeIndexesId }) =>
        documentReply(input.responseType, renderDto(input.responseType, mergeIndexesDto(mergeIndexesId)))
      )
    )
}

/** Every scavenge admin route, for the node's route list. */
export const scavengeRoutes: ReadonlyArray<RouteDef<Scavenger>> = [
  startScavengeRoute,
  currentScavengeRoute,
  lastScavengeRoute,
  stopScavengeRoute,
  mergeIndexesRoute
]
