/** The runner factory the node provides to the projections layer (its tests give a fake). */
import { Context } from "effect"
import type { RunnerFactory } from "./RunnerFactory.js"

export class ProjectionRunnerFactory extends Context.Tag("@vellum/projections/ProjectionRunnerFactory")<
  ProjectionRunnerFactory,
  RunnerFactory
>() {}
