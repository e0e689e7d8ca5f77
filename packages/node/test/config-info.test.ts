import { Effect, LogLevel, Option } from "effect"
import { describe, expect, it } from "vitest"
import { Disk, MemoryDisk } from "@vellum/platform"
import { defaultSecurityConfig } from "@vellum/security"
import { defaultStorageConfig } from "@vellum/storage"
import {
  defaultConfig,
  formatEffectiveConfig,
  groupTitles,
  helpText,
  infoOptions,
  optionSpecs,
  readConfigFileFromDisk,
  toLogLevel,
  toScavengerSettings,
  toSecurityConfig,
  toStorageConfig
} from "../src/config/index.js"
import { load } from "./configSupport.js"

describe("/info/options", () => {
  const loaded = load({
    argv: ["--node-port=2200"],
    env: { VELLUM_DEFAULT_ADMIN_PASSWORD: "s3cret", KURRENTDB_MEM_DB: "true" },
    files: { "vellum.conf": "LogLevel: Warning\n" }
  })
  const rows = infoOptions(loaded)
  const row = (name: string) => rows.find((r) => r.name === name)!

  it("has one entry per option, in table order, with exactly the reference's fields", () => {
    expect(rows.map((r) => r.name)).toEqual(optionSpecs.map((spec) => spec.name))
    for (const r of rows) {
      expect(Object.keys(r)).toEqual([
        "name",
        "description",
        "group",
        "value",
        "configurationSource",
        "deprecationMessage",
        "schema"
      ])
      expect(r.deprecationMessage).toBeNull()
      expect(r.description).not.toBe("")
    }
  })

  it("shows each value as text with the reference's source names", () => {
    expect(row("NodePort")).toMatchObject({
      value: "2200",
      configurationSource: "Command Line",
      group: "InterfaceOptions"
    })
    expect(row("MemDb")).toMatchObject({ value: "true", configurationSource: "Environment Variables" })
    expect(row("LogLevel")).toMatchObject({ value: "Warning", configurationSource: "Yaml", group: "LoggingOptions" })
    expect(row("RunProjections")).toMatchObject({
      value: "All",
      configurationSource: "<DEFAULT>",
      group: "ProjectionOptions"
    })
    expect(row("Db")).toMatchObject({ value: "./data", configurationSource: "<DEFAULT>", group: "DatabaseOptions" })
    expect(row("GossipSeed")).toMatchObject({ value: "", schema: { type: "array", items: { type: "string" } } })
  })

  it("masks sensitive values whatever their source", () => {
    expect(row("DefaultAdminPassword")).toMatchObject({
      value: "********",
      configurationSource: "Environment Variables"
    })
    expect(row("DefaultOpsPassword")).toMatchObject({ value: "********", configurationSource: "<DEFAULT>" })
    expect(JSON.stringify(rows)).not.toContain("s3cret")
    expect(JSON.stringify(rows)).not.toContain("changeit")
  })

  it("gives each option a JSON schema like the reference's", () => {
    expect(row("MemDb").schema).toEqual({ type: "boolean" })
    expect(row("NodePort").schema).toEqual({ type: "integer" })
    expect(row("GossipIntervalMs").schema).toEqual({ type: "integer", "x-unit": "ms" })
    expect(row("NodeIp").schema).toEqual({ type: "string" })
    expect(row("LogLevel").schema).toEqual({
      type: "string",
      name: "LogLevel",
      enum: ["Default", "Verbose", "Debug", "Information", "Warning", "Error", "Fatal"]
    })
  })

  it("--what-if lists changed options first, with their sources, and masks secrets", () => {
    const text = formatEffectiveConfig(loaded)
    const [modified, defaults] = text.split("DEFAULT OPTIONS:")
    expect(modified).toContain("NodePort:")
    expect(modified).toMatch(/NodePort:\s+2200 \(Command Line\)/)
    expect(modified).toMatch(/DefaultAdminPassword:\s+\*{8} \(Environment Variables\)/)
    expect(defaults).toMatch(/Db:\s+\.\/data \(<DEFAULT>\)/)
    expect(defaults).not.toContain("NodePort:")
    expect(text).not.toContain("s3cret")
  })
})

describe("--help", () => {
  const help = helpText("1.2.3")

  it("lists every option with its flag (or variable when environment-only), default and description", () => {
    for (const spec of optionSpecs) {
      const shown = spec.onlyFrom !== undefined && !spec.onlyFrom.includes("cli") ? spec.envName : spec.cliFlag
      const line = help
        .split("\n")
        .find((l) => l.trimStart().startsWith(`${shown} `) || l.trimStart().startsWith(`${shown}=`))
      expect(line, spec.name).toBeDefined()
      expect(line).toContain(spec.description)
      if (spec.defaultText !== "") expect(line).toContain(`default: ${spec.defaultText}`)
    }
  })

  it("shows the group headings, the version, value placeholders and old names", () => {
    for (const [group, title] of Object.entries(groupTitles)) {
      const onCommandLine = optionSpecs.some((spec) => spec.group === group && (spec.onlyFrom?.includes("cli") ?? true))
      // A group of environment-only options (the default passwords) appears under its own heading.
      expect(help.includes(`\n${title}\n`), title).toBe(onCommandLine)
    }
    expect(help).toContain("\nEnvironment-only Options")
    expect(help.split("\n")[0]).toContain("Vellum 1.2.3")
    expect(help).toMatch(
      /--node-port=<integer>\s+The port to run the HTTP server on\. \(default: 2113; old name: --http-port\)/
    )
    expect(help).toContain("--run-projections=<None|System|All>")
    expect(help).toMatch(/\n {2}--mem-db {2,}Keep everything/)
  })
})

describe("derived settings", () => {
  it("maps the options onto the storage engine's settings", () => {
    const config = load({
      argv: [
        "--db=/srv/db",
        "--chunk-size=33554432",
        "--chunks-cache-size=1000",
        "--max-mem-table-size=5000",
        "--stream-info-cache-capacity=7",
        "--max-append-event-size=4096",
        "--skip-db-verify=false",
        "--skip-index-verify=false"
      ]
    }).config
    expect(toStorageConfig(config)).toEqual({
      ...defaultStorageConfig("/srv/db"),
      chunkSize: 33554432,
      readCacheBytes: 1000,
      memtableMaxEntries: 5000,
      streamInfoCacheCapacity: 7,
      maxEventSize: 4096,
      verifyChunksOnOpen: true,
      verifyIndexOnOpen: true
    })
  })

  it("the defaults keep the storage engine's own defaults", () => {
    expect(toStorageConfig(defaultConfig)).toEqual(defaultStorageConfig("./data"))
  })

  it("maps the options onto the security settings", () => {
    const config = load({
      argv: ["--password-hash-cost=12", "--enable-trusted-auth"],
      env: { VELLUM_DEFAULT_ADMIN_PASSWORD: "a", VELLUM_DEFAULT_OPS_PASSWORD: "o" }
    }).config
    expect(toSecurityConfig(config)).toEqual({
      ...defaultSecurityConfig,
      passwordHash: { ...defaultSecurityConfig.passwordHash, logN: 12 },
      defaultAdminPassword: "a",
      defaultOpsPassword: "o",
      enableTrustedAuth: true
    })
    expect(toSecurityConfig(defaultConfig)).toEqual(defaultSecurityConfig)
  })

  it("maps the reference's log levels onto Effect's", () => {
    expect(toLogLevel("Default")).toBe(LogLevel.Info)
    expect(toLogLevel("Verbose")).toBe(LogLevel.Trace)
    expect(toLogLevel("Debug")).toBe(LogLevel.Debug)
    expect(toLogLevel("Information")).toBe(LogLevel.Info)
    expect(toLogLevel("Warning")).toBe(LogLevel.Warning)
    expect(toLogLevel("Error")).toBe(LogLevel.Error)
    expect(toLogLevel("Fatal")).toBe(LogLevel.Fatal)
  })

  it("maps the options onto the scavenger's settings", () => {
    const config = load({
      argv: [
        "--node-ip=10.1.2.3",
        "--node-port=2200",
        "--scavenge-history-max-age=7",
        "--disable-scavenge-merging",
        "--unsafe-ignore-hard-delete",
        "--scavenge-backend-page-size=8",
        "--scavenge-backend-cache-size=4096"
      ]
    }).config
    expect(toScavengerSettings(config, "/srv/db")).toEqual({
      dbDir: "/srv/db",
      nodeEndpoint: "10.1.2.3:2200",
      historyMaxAgeDays: 7,
      disableMerging: true,
      unsafeIgnoreHardDeletes: true,
      statePageBytes: 8 * 1024,
      stateCacheBytes: 4096
    })
  })
})

describe("reading the config file through Disk", () => {
  const run = <A, E>(disk: MemoryDisk, effect: Effect.Effect<A, E, Disk>) =>
    Effect.runSync(Effect.provide(effect, MemoryDisk.layer(disk)))

  it("returns the text (without a byte-order mark) or None when missing", () => {
    const disk = new MemoryDisk()
    run(
      disk,
      Effect.gen(function* () {
        const d = yield* Disk
        yield* d.mkdir("/etc/vellum")
        const handle = yield* d.open("/etc/vellum/vellum.conf", { create: true })
        yield* handle.write(0, Buffer.from("\uFEFFNodePort: 2114\n", "utf8"))
        yield* handle.close
      })
    )
    expect(run(disk, readConfigFileFromDisk("/etc/vellum/vellum.conf"))).toEqual(Option.some("NodePort: 2114\n"))
    expect(run(disk, readConfigFileFromDisk("/etc/vellum/other.conf"))).toEqual(Option.none())
  })

  it("an unreadable path fails with ConfigFileUnreadable naming it", () => {
    const disk = new MemoryDisk()
    run(
      disk,
      Effect.flatMap(Disk, (d) => d.mkdir("/etc/vellum"))
    )
    const error = run(disk, Effect.flip(readConfigFileFromDisk("/etc/vellum")))
    expect(error).toMatchObject({ _tag: "ConfigFileUnreadable", path: "/etc/vellum" })
  })
})
