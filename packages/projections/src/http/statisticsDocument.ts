/**
 * One projection's statistics as `GET /projection/{name}` shows them, members in the reference's order (nulls
 * written): the runner's figures, status and reason, positions as text (`""` before there is one), and the
 * projection's URLs, absolute from the request's base URL. After the reference's members come Vellum's own:
 * `lagEvents`, `lagMilliseconds` and `stateBytes`.
 */
import { checkpointTagText, type CheckpointTag } from "../persisted/checkpointTag.js"
import type { ProjectionStatistics } from "../service/Projections.js"
import { escapeDataString } from "@vellum/http"
import { formatSingle } from "./dotnetSingle.js"
import { arr, int, nul, obj, str, type JsonValue } from "./jsonTree.js"
import { absoluteUrl, projectionPath } from "./urls.js"

const positionText = (tag: CheckpointTag | undefined): string => (tag === undefined ? "" : checkpointTagText(tag))

/** Percent done as a .NET float; -2 when it is no number as a float (the reference's rule for NaN and infinities). */
const progress = (value: number): JsonValue => ({
  kind: "number",
  text: formatSingle(Number.isFinite(Math.fround(value)) ? value : -2)
})

export const statisticsJson = (stats: ProjectionStatistics, baseUrl: string): JsonValue => {
  const runner = stats.runner
  const url = (rest: string) => str(absoluteUrl(baseUrl, projectionPath(stats.name, rest)))
  return obj([
    ["coreProcessingTime", int(runner.coreProcessingTime)],
    ["version", int(stats.version)],
    ["epoch", int(stats.epoch)],
    ["effectiveName", str(stats.name)],
    ["writesInProgress", int(runner.writesInProgress)],
    ["readsInProgress", int(runner.readsInProgress)],
    ["partitionsCached", int(runner.partitionsCached)],
    ["status", str(stats.status)],
    ["stateReason", str(stats.stateReason)],
    ["name", str(stats.name)],
    ["mode", str(stats.mode)],
    ["position", str(positionText(runner.position))],
    ["progress", progress(runner.progress)],
    ["lastCheckpoint", str(positionText(runner.lastCheckpoint))],
    ["eventsProcessedAfterRestart", int(runner.eventsProcessedAfterRestart)],
    ["statusUrl", url("")],
    ["stateUrl", url("/state")],
    ["resultUrl", url("/result")],
    ["queryUrl", url("/query?config=yes")],
    [
      "resultStreamUrl",
      stats.resultStreamName === null || stats.resultStreamName === ""
        ? nul
        : str(absoluteUrl(baseUrl, `/streams/${escapeDataString(stats.resultStreamName)}`))
    ],
    ["enableCommandUrl", url("/command/enable")],
    ["disableCommandUrl", url("/command/disable")],
    ["checkpointStatus", str(runner.checkpointStatus)],
    ["bufferedEvents", int(runner.bufferedEvents)],
    ["writePendingEventsBeforeCheckpoint", int(runner.writePendingEventsBeforeCheckpoint)],
    ["writePendingEventsAfterCheckpoint", int(runner.writePendingEventsAfterCheckpoint)],
    ["lagEvents", int(runner.lagEvents)],
    ["lagMilliseconds", int(runner.lagMilliseconds)],
    ["stateBytes", int(runner.stateBytes)]
  ])
}

/** `{"projections":[…]}`: the lists and `/statistics`. */
export const statisticsListJson = (list: ReadonlyArray<ProjectionStatistics>, baseUrl: string): JsonValue =>
  obj([["projections", arr(list.map((stats) => statisticsJson(stats, baseUrl)))]])
