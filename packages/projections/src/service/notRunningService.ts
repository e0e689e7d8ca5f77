import { Effect } from "effect"
import type { ProjectionsOutcome, ProjectionsService } from "./Projections.js"

const notRunHere: ProjectionsOutcome<never> = { _tag: "NotReady", reason: "Projections do not run on this node" }

/** `--run-projections None`: the subsystem does not run; every call says so. */
export const notRunningService: ProjectionsService = {
  enabled: false,
  list: () => Effect.succeed(notRunHere),
  statistics: () => Effect.succeed(notRunHere),
  create: () => Effect.succeed(notRunHere),
  command: () => Effect.succeed(notRunHere),
  query: () => Effect.succeed(notRunHere),
  updateQuery: () => Effect.succeed(notRunHere),
  config: () => Effect.succeed(notRunHere),
  updateConfig: () => Effect.succeed(notRunHere),
  delete: () => Effect.succeed(notRunHere),
  state: () => Effect.succeed(notRunHere),
  result: () => Effect.succeed(notRunHere),
  readEvents: () => Effect.succeed(notRunHere),
  restart: () => Effect.succeed(notRunHere),
  snapshot: () => []
}
