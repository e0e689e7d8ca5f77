/**
 * A create/update body's settings, checked as the reference checks them and in its order. Two kinds of
 * refusal, because the reference answers them differently: `BadRequest` (its HTTP layer's own checks, a 400
 * with the reason as text) and `Fail` (refused by the subscription service, a 400 carrying the completion
 * document with result `Fail`).
 */
import { Either, Schema } from "effect"
import type { JsonValue } from "@vellum/http"
import { bindJsonBody, bindXmlBody, type BoundBody } from "./bindBody.js"
import { ConsumerStrategies, defaultGroupSettings, type ConsumerStrategy, type GroupSettings } from "./GroupSettings.js"

export class InvalidGroupSettings extends Schema.TaggedError<InvalidGroupSettings>()("InvalidGroupSettings", {
  /** How the refusal is answered: the HTTP layer's text 400, or the service's `Fail` document (also 400). */
  answer: Schema.Literal("BadRequest", "Fail"),
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

const badRequest = (reason: string) => Either.left(new InvalidGroupSettings({ answer: "BadRequest", reason }))
const fail = (reason: string) => Either.left(new InvalidGroupSettings({ answer: "Fail", reason }))

/** The buffer checks, first failing one wins, in the reference's order. */
const bufferProblem = (bufferSize: number, liveBufferSize: number, readBatchSize: number): string | undefined => {
  if (bufferSize <= 0) return `Buffer Size (${bufferSize}) must be positive`
  if (liveBufferSize <= 0) return `Live Buffer Size (${liveBufferSize}) must be positive`
  if (readBatchSize <= 0) return `Read Batch Size (${readBatchSize}) must be positive`
  if (!(bufferSize > readBatchSize))
    return `BufferSize (${bufferSize}) must be larger than ReadBatchSize (${readBatchSize})`
  return undefined
}

/** `startPosition` as a long (leading/trailing white space and a sign allowed), or undefined. */
const parseLong = (text: string): bigint | undefined => {
  if (!/^\s*[+-]?\d+\s*$/.test(text)) return undefined
  const value = BigInt(text.trim())
  return value < -(2n ** 63n) || value > 2n ** 63n - 1n ? undefined : value
}

/**
 * The strategy: named exactly (the reference's registry matches names with case); an explicitly empty name
 * falls back to the legacy `preferRoundRobin` flag; no body at all means round robin.
 */
const strategyOf = (bound: BoundBody | undefined): string => {
  const named =
    bound === undefined ? undefined : (bound.NamedConsumerStrategy ?? defaultGroupSettings.namedConsumerStrategy)
  if (named !== undefined && named !== "") return named
  const preferRoundRobin = bound === undefined || (bound.PreferRoundRobin ?? false)
  return preferRoundRobin ? "RoundRobin" : "DispatchToSingle"
}

const isStrategy = (name: string): name is ConsumerStrategy =>
  (ConsumerStrategies as ReadonlyArray<string>).includes(name)

/** Settings from a bound body (undefined: none, every default), or why they are refused. */
export const settingsFromBound = (bound: BoundBody | undefined): Either.Either<GroupSettings, InvalidGroupSettings> => {
  const d = defaultGroupSettings
  const b: BoundBody = bound ?? {}
  const bufferSize = b.BufferSize ?? d.bufferSize
  const liveBufferSize = b.LiveBufferSize ?? d.liveBufferSize
  const readBatchSize = b.ReadBatchSize ?? d.readBatchSize
  const problem = bufferProblem(bufferSize, liveBufferSize, readBatchSize)
  if (problem !== undefined) return badRequest(problem)

  // The reference parses `startPosition` here without a guard and answers a server error; we answer 400.
  let start = b.StartFrom ?? BigInt(d.startFrom)
  if (b.StartPosition !== undefined) {
    const parsed = parseLong(b.StartPosition)
    if (parsed === undefined) return badRequest(`Start Position '${b.StartPosition}' must be a whole number (a long)`)
    start = parsed
  }

  const strategy = strategyOf(bound)
  if (!isStrategy(strategy)) return fail(`Consumer strategy ${strategy} does not exist.`)
  if (start < -1n) return fail("Invalid Start From position: event number must be greater than or equal to -1.")
  if (start > BigInt(Number.MAX_SAFE_INTEGER)) {
    return badRequest(`Start From position (${start}) must be at most ${Number.MAX_SAFE_INTEGER}`)
  }

  return Either.right({
    resolveLinkTos: b.ResolveLinktos ?? d.resolveLinkTos,
    startFrom: Number(start),
    startPosition: b.StartPosition,
    messageTimeoutMilliseconds: b.MessageTimeoutMilliseconds ?? d.messageTimeoutMilliseconds,
    extraStatistics: b.ExtraStatistics ?? d.extraStatistics,
    maxRetryCount: b.MaxRetryCount ?? d.maxRetryCount,
    liveBufferSize,
    bufferSize,
    readBatchSize,
    preferRoundRobin: b.PreferRoundRobin ?? d.preferRoundRobin,
    checkPointAfterMilliseconds: b.CheckPointAfterMilliseconds ?? d.checkPointAfterMilliseconds,
    minCheckPointCount: b.MinCheckPointCount ?? d.minCheckPointCount,
    maxCheckPointCount: b.MaxCheckPointCount ?? d.maxCheckPointCount,
    maxSubscriberCount: b.MaxSubscriberCount ?? d.maxSubscriberCount,
    namedConsumerStrategy: strategy
  })
}

/** A JSON body, as the lenient reader's tree (undefined when the body is empty or not JSON). */
export const parseJsonGroupSettings = (
  body: JsonValue | undefined
): Either.Either<GroupSettings, InvalidGroupSettings> => settingsFromBound(bindJsonBody(body))

/** An XML body's text. */
export const parseXmlGroupSettings = (text: string): Either.Either<GroupSettings, InvalidGroupSettings> =>
  settingsFromBound(bindXmlBody(text))
