import { Schema } from "effect"

// What can come out of an entry into user code. The engine turns each into a fault with its own wording.

/** User code threw: the JavaScript error's name, its message (or the thrown value as text), and its stack. */
export class SandboxScriptError extends Schema.TaggedError<SandboxScriptError>()("SandboxScriptError", {
  errorName: Schema.String,
  message: Schema.String,
  stack: Schema.String,
  /** The batch item that threw (0 outside batches). */
  item: Schema.Number
}) {}

/** An entry used its whole budget (see `SandboxLimits`): `phase` says whether it was the script itself. */
export class SandboxTimeout extends Schema.TaggedError<SandboxTimeout>()("SandboxTimeout", {
  phase: Schema.Literal("compile", "execute"),
  budget: Schema.Number,
  stack: Schema.String,
  item: Schema.Number,
  message: Schema.String
}) {}

/** User code went over the sandbox's memory limit. The sandbox stays usable; the host is untouched. */
export class SandboxOutOfMemory extends Schema.TaggedError<SandboxOutOfMemory>()("SandboxOutOfMemory", {
  limitBytes: Schema.Number,
  item: Schema.Number,
  message: Schema.String
}) {}

/**
 * The interpreter itself stopped abnormally (the host's own stack ran out under it): its state is unknown, so
 * the sandbox refuses further use and the projection must start a new one.
 */
export class SandboxBroken extends Schema.TaggedError<SandboxBroken>()("SandboxBroken", {
  item: Schema.Number,
  message: Schema.String
}) {}

export type SandboxError = SandboxScriptError | SandboxTimeout | SandboxOutOfMemory | SandboxBroken
