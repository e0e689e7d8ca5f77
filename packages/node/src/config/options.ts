/**
 * Every node option, in one table: the single source for parsing (command line, environment, YAML),
 * validation, defaults, `--help`, `/info/options` and docs/configuration.md.
 *
 * Names are the reference server's (KurrentDB 25, `ClusterVNodeOptions`) wherever the reference has the
 * option, so existing command lines, compose files and YAML files keep working; Vellum-only options are
 * marked in their description. Defaults follow the reference except where docs/configuration.md says why
 * not (AtomPub on, JSON console logs, verification at start-up off, a local ./data directory).
 */
import type { Either } from "effect"
import { clusterOptions } from "./clusterOptions.js"
import { cliFlagOf, envNameOf, lookupKey, yamlKeyOf } from "./naming.js"
import {
  type ErasedCodec,
  flag,
  GiB,
  KiB,
  MAX_INT32,
  MiB,
  millis,
  option,
  type OptionDef,
  type OptionGroup,
  type SourceKind
} from "./optionDef.js"
import {
  boolean,
  integer,
  ipAddress,
  type OptionJsonSchema,
  oneOf,
  text,
  type ValueKind,
  type ValueType
} from "./valueTypes.js"

export { groupTitles, type OptionDef, type OptionGroup, type SourceKind } from "./optionDef.js"

/** The storage engine's record-format limit for one event (data + metadata). */
export const STORAGE_MAX_EVENT_SIZE = 16 * MiB - 10_000

export const optionTable = {
  // Application
  Help: option({ group: "Application", description: "Show help.", type: boolean(), default: false, onlyFrom: ["cli"] }),
  Version: option({
    group: "Application",
    description: "Show version.",
    type: boolean(),
    default: false,
    onlyFrom: ["cli"]
  }),
  Config: option({
    group: "Application",
    description: "The YAML configuration file. Optional when left at its default; must exist when given.",
    type: text({ nonEmpty: true, placeholder: "<path>" }),
    default: "vellum.conf",
    onlyFrom: ["cli", "env"]
  }),
  WhatIf: flag("Application", "Print the effective configuration, with the source of each value, then exit."),
  AllowUnknownOptions: flag(
    "Application",
    "Start even when unknown options are present (they are reported as warnings)."
  ),
  DisableHttpCaching: flag("Application", "Disable HTTP caching."),
  StatsPeriodSec: option({
    group: "Application",
    description: "The number of seconds between statistics gathers (written to the $stats stream with WriteStatsToDb).",
    type: integer({ min: 1, max: 86_400, unit: "s" }),
    default: 30
  }),
  LogHttpRequests: flag(
    "Application",
    "Log one line per HTTP request: method, path, status and time taken (never headers, credentials, query strings or bodies)."
  ),
  LogFailedAuthenticationAttempts: flag(
    "Application",
    "Log each failed login as a warning, with the login name and the client's address (never the password)."
  ),
  MaxAppendSize: option({
    group: "Application",
    description:
      "The maximum size of appends, in bytes: the total size of all events in one append request. May not exceed 16MB. " +
      "Over HTTP it also bounds every request body, which is refused unread when larger.",
    type: integer({ min: 1, max: 16 * MiB }),
    default: 1 * MiB
  }),
  MaxAppendEventSize: option({
    group: "Application",
    description: `The maximum size of one event (data + metadata) in an append request, in bytes. At most ${STORAGE_MAX_EVENT_SIZE} (the storage record limit).`,
    type: integer({ min: 1, max: STORAGE_MAX_EVENT_SIZE }),
    default: STORAGE_MAX_EVENT_SIZE
  }),
  Insecure: flag(
    "Application",
    "Disable authentication and authorization: every request acts as the system user. Vellum serves plain HTTP either way."
  ),
  AllowAnonymousEndpointAccess: flag("Application", "Allow anonymous access to HTTP API endpoints."),
  AllowAnonymousStreamAccess: flag("Application", "Allow anonymous access to streams."),
  OverrideAnonymousEndpointAccessForGossip: flag(
    "Application",
    "Let the gossip endpoint accept anonymous access; otherwise it follows AllowAnonymousEndpointAccess.",
    true
  ),

  // Default users
  DefaultAdminPassword: option({
    group: "DefaultUser",
    description: "Password of the default admin user, set when the user is first created.",
    type: text({ nonEmpty: true, placeholder: "<password>" }),
    default: "changeit",
    sensitive: true,
    onlyFrom: ["env"]
  }),
  DefaultOpsPassword: option({
    group: "DefaultUser",
    description: "Password of the default ops user, set when the user is first created.",
    type: text({ nonEmpty: true, placeholder: "<password>" }),
    default: "changeit",
    sensitive: true,
    onlyFrom: ["env"]
  }),

  // Logging
  LogLevel: option({
    group: "Logging",
    description: "The minimum level of the messages logged.",
    type: oneOf(["Default", "Verbose", "Debug", "Information", "Warning", "Error", "Fatal"]),
    default: "Default"
  }),
  LogConsoleFormat: option({
    group: "Logging",
    description: "The console log format: one JSON object per line, or plain text.",
    type: oneOf(["Json", "Plain"]),
    default: "Json"
  }),
  Log: option({
    group: "Logging",
    description:
      "A directory to write the log to as well, as <dir>/vellum.log (one JSON object per line, appended); " +
      "created if missing. Empty: the console only.",
    type: text({ placeholder: "<path>" }),
    default: ""
  }),

  // Authentication
  EnableTrustedAuth: flag(
    "Auth",
    "Enable trusted authentication by an intermediary in HTTP (the Kurrent-TrustedAuth / ES-TrustedAuth header)."
  ),
  PasswordHashCost: option({
    group: "Auth",
    description:
      "Vellum: the cost of new password hashes as scrypt's log2(N): 15 takes 32 MiB and about 0.1-0.2 s per hash, " +
      "each step up doubles both. Existing hashes keep the cost they were made with.",
    type: integer({ min: 1, max: 20 }),
    default: 15
  }),

  // Cluster (with the internal interface, timings and replication limits: clusterOptions.ts)
  ...clusterOptions,

  // Database
  Db: option({
    group: "Database",
    description: "The path the database is loaded from and saved to.",
    type: text({ nonEmpty: true, placeholder: "<path>" }),
    default: "./data"
  }),
  MemDb: flag("Database", "Keep everything in memory: no directories or files are created."),
  ChunkSize: option({
    group: "Database",
    description: "The size of a log chunk in bytes; fixed when the database is created.",
    type: integer({ min: 64 * KiB, max: 2 * GiB }),
    default: 256 * MiB
  }),
  ChunksCacheSize: option({
    group: "Database",
    description:
      "The amount of memory, in bytes, used to cache log blocks for reads (a quarter as much again keeps hot records decoded).",
    type: integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    // About the reference's default (two 256 MiB chunks). With 64 MiB, a read working set of a few hundred
    // thousand events fell out of the cache and every page was read, decoded and rendered afresh.
    default: 512 * MiB
  }),
  MaxMemTableSize: option({
    group: "Database",
    description:
      "The number of index entries kept in memory before they are written to an index table (half the reference's 1,000,000: after a crash, a start replays at most this many events).",
    type: integer({ min: 1_000, max: 100_000_000 }),
    default: 524_288
  }),
  StreamInfoCacheCapacity: option({
    group: "Database",
    description: "The maximum number of entries to keep in the stream info cache.",
    type: integer({ min: 0, max: MAX_INT32 }),
    default: 100_000
  }),
  SkipDbVerify: flag(
    "Database",
    "Skip checking the whole-file checksums of completed chunks at start-up (records are checksummed on every read anyway).",
    true
  ),
  SkipIndexVerify: flag("Database", "Skip checking the checksums of index tables at start-up.", true),
  WriteStatsToDb: flag(
    "Database",
    "Write statistics to the database: a $statsCollected event in $stats-<ip>:<port> every StatsPeriodSec, kept ten days."
  ),
  DisableScavengeMerging: flag("Database", "Disable the merging of small chunks when scavenge is running."),
  UnsafeIgnoreHardDelete: flag(
    "Database",
    "Makes a scavenge remove tombstones and every event of hard-deleted streams, so their names can be used again. Unsafe: hard-deleted streams stop reading as deleted."
  ),
  ScavengeHistoryMaxAge: option({
    group: "Database",
    description: "The number of days to keep scavenge history.",
    type: integer({ min: 0, max: 36_500, unit: "d" }),
    default: 30
  }),
  ScavengeBackendPageSize: option({
    group: "Database",
    description: "The page size of the scavenge database, in KiB.",
    type: integer({ min: 1, max: 64, unit: "KiB" }),
    default: 16
  }),
  ScavengeBackendCacheSize: option({
    group: "Database",
    description: "The amount of memory, in bytes, used to cache the scavenge database.",
    type: integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    default: 64 * MiB
  }),
  ScavengeHashUsersCacheCapacity: option({
    group: "Database",
    description:
      "The number of stream hashes to remember when checking for collisions (raise it when accumulation reports many cache misses).",
    type: integer({ min: 1, max: MAX_INT32 }),
    default: 100_000
  }),

  // Interface
  NodeIp: option({
    group: "Interface",
    description: "The IP address the HTTP server listens on (0.0.0.0 for every interface).",
    type: ipAddress(),
    default: "127.0.0.1",
    aliases: ["HttpIp"]
  }),
  NodePort: option({
    group: "Interface",
    description: "The port to run the HTTP server on.",
    type: integer({ min: 1, max: 65_535 }),
    default: 2113,
    aliases: ["HttpPort"]
  }),
  EnableAtomPubOverHttp: flag("Interface", "Enable the AtomPub over HTTP interface (on by default in Vellum).", true),
  DisableAdminUi: flag(
    "Interface",
    "Disable the admin UI (Vellum has none) and, as in the reference, the admin endpoints (/admin/shutdown, /admin/scavenge...)."
  ),
  DisableStatsOnHttp: flag("Interface", "Disable statistics requests on the HTTP endpoint."),
  DisableGossipOnHttp: flag("Interface", "Disable gossip requests on the HTTP endpoint."),
  HttpHeadersTimeout: option({
    group: "Interface",
    description:
      "Vellum: the time, in ms, a client has to send its request headers; a slower one gets 408 and is disconnected. " +
      "At most HttpRequestTimeout.",
    type: integer({ min: 100, max: 3_600_000, unit: "ms" }),
    default: 10_000
  }),
  HttpRequestTimeout: option({
    group: "Interface",
    description:
      "Vellum: the time, in ms, a client has to send its whole request, headers and body; a slower one gets 408 and is " +
      "disconnected. It stops counting when the request has arrived, so long polls are not cut.",
    type: integer({ min: 100, max: 3_600_000, unit: "ms" }),
    default: 60_000
  }),
  HttpKeepAliveTimeout: option({
    group: "Interface",
    description:
      "Vellum: the time, in ms, an idle keep-alive HTTP connection stays open. Longer than the idle timeout of client " +
      "pools and load balancers (often 60 s), so they close first.",
    type: integer({ min: 100, max: 3_600_000, unit: "ms" }),
    default: 65_000
  }),
  HttpMaxConnections: option({
    group: "Interface",
    description:
      "Vellum: the most HTTP connections open at once; more are closed as they arrive. Keep it below the process's " +
      "open-file limit (ulimit -n) minus the files the database holds open.",
    type: integer({ min: 1, max: 1_000_000 }),
    default: 500
  }),

  // Projections
  RunProjections: option({
    group: "Projection",
    description:
      "Which projections run: None turns the subsystem off, System runs the built-in projections, All runs user projections too. Vellum: All by default.",
    type: oneOf(["None", "System", "All"]),
    default: "All"
  }),
  StartStandardProjections: flag("Projection", "Start the built-in system projections."),
  ProjectionsQueryExpiry: option({
    group: "Projection",
    description: "The number of minutes a query can be idle before it expires.",
    type: integer({ min: 1, max: MAX_INT32, unit: "m" }),
    default: 5
  }),
  FaultOutOfOrderProjections: flag(
    "Projection",
    "Fault a projection when the event number expected in a stream differs from the one received (events deleted or expired)."
  ),
  ProjectionCompilationTimeout: millis("Projection", "The time, in ms, allowed for compiling a user projection.", 500),
  ProjectionExecutionTimeout: millis(
    "Projection",
    "The maximum time, in ms, a user projection's handler may run for one event.",
    250
  ),
  MaxProjectionStateSize: option({
    group: "Projection",
    description: "The maximum size, in bytes, of a projection's state and result. May not exceed 16MB.",
    type: integer({ min: 1, max: 16 * MiB }),
    default: 16 * MiB
  }),

  // Auto-scavenge
  AutoScavengeEnabled: option({
    group: "AutoScavenge",
    description:
      "Scavenge the cluster on a schedule, one node at a time (the /auto-scavenge endpoints). On unless set to false; off with MemDb unless set, and true with MemDb is refused.",
    type: boolean(),
    default: true,
    path: ["AutoScavenge", "Enabled"],
    alsoNamed: ["AutoScavengeEnabled"]
  })
}

export type OptionName = keyof typeof optionTable

type ValueOf<D> = D extends OptionDef<infer A> ? A : never

/** The node's configuration: one typed field per option, named as the option. */
export type Config = { readonly [K in OptionName]: ValueOf<(typeof optionTable)[K]> }

/** An option with everything derived from its table entry, erased to one shape for generic code. */
export interface OptionSpec {
  readonly name: OptionName
  readonly group: OptionGroup
  readonly description: string
  readonly kind: ValueKind
  readonly placeholder: string
  readonly choices: ReadonlyArray<string> | undefined
  readonly path: ReadonlyArray<string>
  readonly aliases: ReadonlyArray<string>
  readonly alsoNamed: ReadonlyArray<string>
  readonly sensitive: boolean
  readonly onlyFrom: ReadonlyArray<Exclude<SourceKind, "default">> | undefined
  readonly deprecation: string | undefined
  readonly cliFlag: string
  /** The primary environment variable (`VELLUM_…`); `KURRENTDB_…` and `EVENTSTORE_…` are also read. */
  readonly envName: string
  readonly yamlKey: string
  readonly jsonSchema: OptionJsonSchema
  readonly defaultValue: unknown
  readonly defaultText: string
  readonly decode: (raw: string) => Either.Either<unknown, string>
  /** Canonical text of a value of this option. */
  readonly encode: (value: unknown) => string
}

/** The environment prefixes read, lowest precedence first (the reference reads EVENTSTORE_ before KURRENTDB_). */
export const ENV_PREFIXES = ["EVENTSTORE_", "KURRENTDB_", "VELLUM_"] as const
export type EnvPrefix = (typeof ENV_PREFIXES)[number]
export const PRIMARY_ENV_PREFIX: EnvPrefix = "VELLUM_"

/** A table entry seen without its value type (all that `toSpec` needs). */
type ErasedEntry = Omit<OptionDef<unknown>, "type" | "default"> & {
  readonly type: Pick<ValueType<unknown>, "kind" | "placeholder" | "choices" | "jsonSchema">
  readonly default: unknown
  readonly codec: ErasedCodec
}

const toSpec = (name: OptionName, entry: ErasedEntry): OptionSpec => {
  const path = entry.path ?? [name]
  return {
    name,
    group: entry.group,
    description: entry.description,
    kind: entry.type.kind,
    placeholder: entry.type.placeholder,
    choices: entry.type.choices,
    path,
    aliases: entry.aliases ?? [],
    alsoNamed: entry.alsoNamed ?? [],
    sensitive: entry.sensitive ?? false,
    onlyFrom: entry.onlyFrom,
    deprecation: entry.deprecation,
    cliFlag: cliFlagOf(path),
    envName: envNameOf(PRIMARY_ENV_PREFIX, path),
    yamlKey: yamlKeyOf(path),
    jsonSchema: entry.type.jsonSchema(name),
    defaultValue: entry.default,
    defaultText: entry.codec.encode(entry.default),
    decode: entry.codec.decode,
    encode: entry.codec.encode
  }
}

/** Every option, in table order (groups stay together). */
export const optionSpecs: ReadonlyArray<OptionSpec> = (Object.keys(optionTable) as Array<OptionName>).map((name) =>
  toSpec(name, optionTable[name])
)

const byLookupKey = new Map<string, { readonly spec: OptionSpec; readonly alias: string | undefined }>()
for (const spec of optionSpecs) {
  byLookupKey.set(lookupKey(spec.path), { spec, alias: undefined })
  for (const name of spec.alsoNamed) byLookupKey.set(lookupKey([name]), { spec, alias: undefined })
  for (const alias of spec.aliases) byLookupKey.set(lookupKey([alias]), { spec, alias })
}

/** Finds an option by any spelling of its name or of an alias; `alias` says which alias matched. */
export const findOption = (
  path: ReadonlyArray<string>
): { readonly spec: OptionSpec; readonly alias: string | undefined } | undefined => byLookupKey.get(lookupKey(path))

/** The configuration with every option at its default. */
export const defaultConfig: Config = Object.fromEntries(
  optionSpecs.map((spec) => [spec.name, spec.defaultValue])
) as Config // built from every entry of the table, so every field of Config is present with its type
