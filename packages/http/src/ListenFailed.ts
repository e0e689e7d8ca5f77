/**
 * The HTTP server could not bind its address: an operator's problem (a port taken, a privileged port, an
 * address the machine does not have), reported as one sentence that says what to change.
 */
import { Data } from "effect"

const explanations: Readonly<Record<string, string>> = {
  EADDRINUSE: "the port is already in use (another process listens on it; pick another with --node-port)",
  EACCES: "permission denied (ports below 1024 need privileges; pick another with --node-port)",
  EADDRNOTAVAIL: "this machine has no such address (check --node-ip)"
}

export class ListenFailed extends Data.TaggedError("ListenFailed")<{
  readonly host: string
  readonly port: number
  /** The system error code (`EADDRINUSE`, ...), when there is one. */
  readonly code: string | undefined
  readonly detail: string
}> {
  override get message(): string {
    const why = (this.code !== undefined ? explanations[this.code] : undefined) ?? this.detail
    return `cannot listen on ${this.host}:${this.port}: ${why}${this.code === undefined ? "" : ` [${this.code}]`}`
  }
}
