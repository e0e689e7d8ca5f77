/**
 * The body of `POST /gossip`: a cluster view in the JSON shape `GET /gossip` answers with
 * (`{members: [...], serverIp, serverPort}`, camelCase, states by name, ISO time stamps). Every field of
 * every member is checked, so a bad body is refused with the first thing wrong with it (a 400) and never
 * reaches the gossip merge half-read.
 */
import { Either, ParseResult, Schema } from "effect"
import { VNodeStates, type ClusterInfo, type MemberInfo } from "@vellum/cluster"

const Port = Schema.Int.pipe(Schema.between(0, 65535))
const Position = Schema.Int.pipe(Schema.greaterThanOrEqualTo(-1))

/** An ISO 8601 time stamp, kept as ms since the Unix epoch. */
const TimeStamp = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (text, _, ast) => {
    const millis = Date.parse(text)
    return Number.isFinite(millis)
      ? ParseResult.succeed(millis)
      : ParseResult.fail(new ParseResult.Type(ast, text, `"${text}" is not an ISO 8601 time stamp`))
  },
  encode: (millis) => ParseResult.succeed(new Date(millis).toISOString())
})

const Member = Schema.Struct({
  instanceId: Schema.UUID,
  timeStamp: TimeStamp,
  state: Schema.Literal(...VNodeStates),
  isAlive: Schema.Boolean,
  internalTcpIp: Schema.String,
  internalTcpPort: Port,
  internalSecureTcpPort: Port,
  externalTcpIp: Schema.String,
  externalTcpPort: Port,
  externalSecureTcpPort: Port,
  internalHttpEndPointIp: Schema.NonEmptyString,
  internalHttpEndPointPort: Port,
  httpEndPointIp: Schema.NonEmptyString,
  httpEndPointPort: Port,
  lastCommitPosition: Position,
  writerCheckpoint: Position,
  chaserCheckpoint: Position,
  epochPosition: Position,
  epochNumber: Schema.Int.pipe(Schema.greaterThanOrEqualTo(-1)),
  epochId: Schema.UUID,
  nodePriority: Schema.Int,
  isReadOnlyReplica: Schema.Boolean,
  esVersion: Schema.String
})

const ClusterView = Schema.Struct({
  members: Schema.Array(Member),
  serverIp: Schema.String,
  serverPort: Port
})

const decodeView = Schema.decodeUnknownEither(ClusterView, { onExcessProperty: "ignore" })

/** Where in the body an issue is: `members[2].state`. */
const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

/** The cluster view in a `POST /gossip` body, or why it is not one. */
export const parseGossipBody = (body: Uint8Array | undefined): Either.Either<ClusterInfo, string> => {
  const text = body === undefined ? "" : new TextDecoder().decode(body)
  if (text.trim() === "") return Either.left("Gossip body is empty: expected the JSON that GET /gossip answers.")
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(`Gossip body is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  return Either.mapBoth(decodeView(json), {
    onLeft: (error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${pathText(issue.path)}`
      return `Invalid gossip body${where}: ${issue?.message ?? "not a cluster view"}`
    },
    onRight: (view) => ({
      members: view.members.map((m): MemberInfo => ({ ...m })),
      serverIp: view.serverIp,
      serverPort: view.serverPort
    })
  })
}
