/**
 * The reasons a running projection faults with, as the reference words them (statistics show them as
 * `stateReason`), plus what we add after a handler's message: the event's type and the JavaScript stack.
 */
import { checkpointTagText, type CheckpointTag } from "../persisted/checkpointTag.js"

/** The handler name the reference prints for user JavaScript. */
export const javaScriptHandlerName = "EventStore.Projections.Core.Services.Interpreted.JintProjectionStateHandler"

export const emitNotAllowedReason = "'emit' is not allowed by the projection/configuration/mode"

/** .NET's `N0`: thousands separated by commas. */
const groupThousands = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",")

export const stateSizeReason = (name: string, partition: string, size: number, max: number): string =>
  `The state size of projection '${name}'${partition === "" ? "" : ` in partition '${partition}'`} is ` +
  `${groupThousands(size)} bytes which exceeds the configured MaxProjectionStateSize of ${groupThousands(max)} bytes.`

export const checkpointWrittenFromOutsideReason = (stream: string): string =>
  `Checkpoint stream \`${stream}\` has been written to from the outside`

export interface HandlerFaultContext {
  readonly name: string
  /** A deletion notification (`$deleted`) rather than an event. */
  readonly deletion: boolean
  readonly position: CheckpointTag
  readonly eventType: string
  readonly message: string
  readonly stack: string
}

/**
 * The reference's frame around a handler's message, then (ours) `\r\n\r\nEvent Type: {type}` and, when the
 * runtime gave one, `\r\n\r\nStack:\r\n\r\n{stack}`.
 */
export const handlerFaultReason = (context: HandlerFaultContext): string => {
  const what = context.deletion ? "a delete partition notification" : "an event"
  const framed =
    `The ${context.name} projection failed to process ${what}.\r\nHandler: ${javaScriptHandlerName}\r\n` +
    `Event Position: ${checkpointTagText(context.position)}\r\n\r\nMessage:\r\n\r\n${context.message}`
  const typed = `${framed}\r\n\r\nEvent Type: ${context.eventType}`
  return context.stack === "" ? typed : `${typed}\r\n\r\nStack:\r\n\r\n${context.stack}`
}
