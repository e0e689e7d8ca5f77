import { Schema } from "effect"

/** A system projection's query text is not a config it accepts; the projection faults with `message`. */
export class SystemProjectionConfigInvalid extends Schema.TaggedError<SystemProjectionConfigInvalid>()(
  "SystemProjectionConfigInvalid",
  { projection: Schema.String, message: Schema.String }
) {}
