/**
 * The HTTP server could not bind its address: an operator's problem (a port taken, a privileged port, an
 * address the machine does not have), reported as one sentence that says what to change.
 */
import { Schema } from "effect"

const explanations: Readonly<Record<string, string>> = {
  EADDRINUSE: "the port is already in use (another process listens on it; pick another with --node-port)",
  EACCES: "permission denied (ports below 1024 need privileges; pick another with --node-port)",
  EADDRNOTAVAIL: "this machine has no such address (check --node-ip)"
}

export class ListenFailed extends Schema.TaggedError<ListenFailed>()("ListenFailed", {
  host: Schema.String,
  port: Schema.Number,
  /** The system error code (`EADDRINUSE`, ...), when there is one. */
  code: Schema.UndefinedOr(Schema.String),
  detail: Schema.String,
  /** The system error. */
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    const why = (this.code !== undefined ? explanations[this.code] : undefined) ?? this.detail
    return `cannot listen on ${this.host}:${this.port}: ${why}${this.code === undefined ? "" : ` [${this.code}]`}`
  }
}
