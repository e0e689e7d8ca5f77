import { Schema } from "effect"

/**
 * The script could not be compiled: a syntax error, a throw at top level, a definition function given a wrong
 * argument, a builder method called where it is not allowed, or the compile budget used up. `message` is what
 * the projection's status shows; `stack` is the JavaScript stack where there is one.
 */
export class ProjectionCompileFault extends Schema.TaggedError<ProjectionCompileFault>()("ProjectionCompileFault", {
  message: Schema.String,
  stack: Schema.String
}) {}

/** The definition compiled but cannot run (checked when the projection is prepared): the reference's message. */
export class SourceDefinitionInvalid extends Schema.TaggedError<SourceDefinitionInvalid>()("SourceDefinitionInvalid", {
  message: Schema.String
}) {}
