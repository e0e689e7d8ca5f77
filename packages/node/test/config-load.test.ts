import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { defaultConfig, formatConfigError } from "../src/config/index.js"
import { fail, load, outcome } from "./configSupport.js"

describe("precedence: command line > environment > config file > defaults", () => {
  const sources = ["yaml", "env", "cli"] as const
  const subsets = Array.from({ length: 1 << sources.length }, (_, mask) => sources.filter((_, i) => mask & (1 << i)))

  it.each(subsets.map((subset) => [subset.join("+") || "defaults only", subset] as const))("%s", (_label, subset) => {
    const loaded = load({
      argv: subset.includes("cli") ? ["--node-port=3003"] : [],
      env: subset.includes("env") ? { VELLUM_NODE_PORT: "3002" } : {},
      files: subset.includes("yaml") ? { "vellum.conf": "NodePort: 3001\n" } : {}
    })
    const winner = subset.at(-1)
    const expected = winner === "cli" ? 3003 : winner === "env" ? 3002 : winner === "yaml" ? 3001 : 2113
    expect(loaded.config.NodePort).toBe(expected)
    expect(loaded.sources.NodePort._tag).toBe(
      winner === undefined ? "Default" : { yaml: "Yaml", env: "Env", cli: "Cli" }[winner]
    )
  })

  const prefixes = ["EVENTSTORE_", "KURRENTDB_", "VELLUM_"] as const
  const prefixSubsets = Array.from({ length: (1 << prefixes.length) - 1 }, (_, i) =>
    prefixes.filter((_, j) => (i + 1) & (1 << j))
  )
  it.each(prefixSubsets.map((subset) => [subset.join("+"), subset] as const))(
    "environment prefixes %s: VELLUM_ > KURRENTDB_ > EVENTSTORE_",
    (_label, subset) => {
      const env = Object.fromEntries(
        subset.map((prefix) => [`${prefix}STATS_PERIOD_SEC`, String(prefixes.indexOf(prefix) + 3)])
      )
      const loaded = load({ env })
      expect(loaded.config.StatsPeriodSec).toBe(prefixes.indexOf(subset.at(-1)!) + 3)
      expect(loaded.sources.StatsPeriodSec).toEqual({ _tag: "Env", variable: `${subset.at(-1)}STATS_PERIOD_SEC` })
    }
  )

  it("only the effective value is validated: a bad file value overridden on the command line is fine", () => {
    const loaded = load({ argv: ["--node-port", "4000"], files: { "vellum.conf": "NodePort: not-a-port\n" } })
    expect(loaded.config.NodePort).toBe(4000)
  })

  it("with nothing given, every option has its default", () => {
    expect(load({}).config).toEqual(defaultConfig)
  })
})

describe("command line", () => {
  it.each([
    [["--mem-db"], true],
    [["--mem-db=true"], true],
    [["--mem-db", "true"], true],
    [["--mem-db=false"], false],
    [["--mem-db", "False"], false],
    [["--mem-db", "--insecure"], true],
    [["--MemDb"], true],
    [["--memdb=TRUE"], true]
  ])("boolean %j → %s", (argv, expected) => {
    expect(load({ argv }).config.MemDb).toBe(expected)
  })

  it("a bare boolean flag does not swallow the next option", () => {
    const config = load({ argv: ["--mem-db", "--insecure"] }).config
    expect(config.Insecure).toBe(true)
  })

  it("a boolean flag on the command line overrides the environment either way", () => {
    expect(load({ argv: ["--mem-db=false"], env: { VELLUM_MEM_DB: "true" } }).config.MemDb).toBe(false)
  })

  it("takes values inline or as the next argument, negative numbers included", () => {
    const config = load({
      argv: ["--node-port", "3000", "--node-priority", "-5", "--db=/var/lib/vellum", "--log-level", "debug"]
    }).config
    expect(config).toMatchObject({ NodePort: 3000, NodePriority: -5, Db: "/var/lib/vellum", LogLevel: "Debug" })
  })

  it("nested keys use ':'", () => {
    expect(load({ argv: ["--auto-scavenge:enabled=false"] }).sources.AutoScavengeEnabled).toEqual({
      _tag: "Cli",
      flag: "--auto-scavenge:enabled"
    })
  })

  it("an option without its value is an error naming it", () => {
    for (const argv of [["--node-port"], ["--node-port", "--mem-db"]]) {
      const [problem] = fail({ argv }).problems
      expect(problem).toMatchObject({ option: "NodePort", origin: { _tag: "Cli", flag: "--node-port" } })
      expect(problem!.reason).toContain("needs a value")
    }
  })

  it("a stray argument is an error", () => {
    const error = fail({ argv: ["--mem-db", "yes-please"] })
    expect(error.message).toContain('unexpected argument "yes-please"')
  })

  it("an option given twice is an error, aliases included", () => {
    const [problem] = fail({ argv: ["--node-port=1", "--http-port=2"] }).problems
    expect(problem).toMatchObject({ option: "NodePort", origin: { _tag: "Cli", flag: "--http-port" } })
    expect(problem!.reason).toContain("more than once on the command line")
  })

  it("old names still work, with a warning", () => {
    const loaded = load({ argv: ["--http-port=2200", "--http-ip=0.0.0.0"] })
    expect(loaded.config).toMatchObject({ NodePort: 2200, NodeIp: "0.0.0.0" })
    expect(loaded.warnings).toContain(
      "HttpPort is the old name of NodePort; prefer --node-port / VELLUM_NODE_PORT / NodePort"
    )
  })

  it("a bad value names the option, the flag and why", () => {
    const error = fail({ argv: ["--node-port=abc"] })
    expect(error.problems).toEqual([
      { option: "NodePort", origin: { _tag: "Cli", flag: "--node-port" }, reason: 'expected an integer, got "abc"' }
    ])
    expect(formatConfigError(error)).toBe(
      [
        "Vellum cannot start: a configuration problem:",
        '  - NodePort from command line --node-port: expected an integer, got "abc"',
        "Run with --help to list the options."
      ].join("\n")
    )
  })
})

describe("help and version", () => {
  it.each([[["--help"]], [["-h"]], [["--help=true"]], [["--node-port=bad", "--help", "--bogus"]]])(
    "%j shows the help",
    (argv) => {
      const result = outcome({ argv })
      expect(Either.isRight(result) && result.right._tag).toBe("Help")
    }
  )

  it("--version shows the version", () => {
    expect(outcome({ argv: ["--version"] })).toEqual(Either.right({ _tag: "Version", text: "Vellum 1.2.3" }))
  })

  it("--help=false starts the node", () => {
    expect(load({ argv: ["--help=false"] }).config.Help).toBe(false)
  })

  it("help cannot come from the environment", () => {
    const [problem] = fail({ env: { VELLUM_HELP: "true" } }).problems
    expect(problem).toMatchObject({ option: "Help", origin: { _tag: "Env", variable: "VELLUM_HELP" } })
    expect(problem!.reason).toBe("can only be set on the command line (--help)")
  })
})

describe("environment", () => {
  it("reads every prefix, names in upper snake case, __ for nesting", () => {
    const loaded = load({
      env: { EVENTSTORE_MEM_DB: "true", KURRENTDB_LOG_LEVEL: "Warning", VELLUM_AUTO_SCAVENGE__ENABLED: "false" }
    })
    expect(loaded.config).toMatchObject({ MemDb: true, LogLevel: "Warning", AutoScavengeEnabled: false })
    expect(loaded.sources.AutoScavengeEnabled).toEqual({ _tag: "Env", variable: "VELLUM_AUTO_SCAVENGE__ENABLED" })
  })

  it("an unknown VELLUM_ variable is an error with a suggestion", () => {
    const [problem] = fail({ env: { VELLUM_NODE_PROT: "1" } }).problems
    expect(problem).toEqual({
      option: undefined,
      origin: { _tag: "Env", variable: "VELLUM_NODE_PROT" },
      reason: "unknown option",
      hint: "did you mean VELLUM_NODE_PORT?"
    })
  })

  it("unknown KURRENTDB_/EVENTSTORE_ variables only warn (clients share the environment)", () => {
    const loaded = load({ env: { KURRENTDB_CONNECTION_STRING: "esdb://x", EVENTSTORE_CERTIFICATE_FILE: "/c" } })
    expect(loaded.warnings).toEqual([
      "environment variable EVENTSTORE_CERTIFICATE_FILE is not a Vellum option; ignored",
      "environment variable KURRENTDB_CONNECTION_STRING is not a Vellum option; ignored"
    ])
  })

  it("a bad value names the variable", () => {
    const [problem] = fail({ env: { KURRENTDB_MEM_DB: "yes" } }).problems
    expect(problem).toEqual({
      option: "MemDb",
      origin: { _tag: "Env", variable: "KURRENTDB_MEM_DB" },
      reason: 'expected true or false, got "yes"'
    })
  })

  it("default passwords come only from the environment", () => {
    const loaded = load({ env: { KURRENTDB_DEFAULT_ADMIN_PASSWORD: "s3cret", VELLUM_DEFAULT_OPS_PASSWORD: "0ps" } })
    expect(loaded.config).toMatchObject({ DefaultAdminPassword: "s3cret", DefaultOpsPassword: "0ps" })
    const cli = fail({ argv: ["--default-admin-password=x"] }).problems[0]!
    expect(cli).toMatchObject({ option: "DefaultAdminPassword", origin: { _tag: "Cli" } })
    expect(cli.reason).toBe("can only be set with an environment variable (VELLUM_DEFAULT_ADMIN_PASSWORD)")
    const yaml = fail({ files: { "vellum.conf": "DefaultOpsPassword: x\n" } }).problems[0]!
    expect(yaml).toMatchObject({ option: "DefaultOpsPassword", origin: { _tag: "Yaml" } })
  })
})

describe("unknown options", () => {
  it("names match in any case and with or without dashes, as in the reference", () => {
    expect(load({ argv: ["--enable-atompub-over-http=false", "--NODEPORT=1"] }).config).toMatchObject({
      EnableAtomPubOverHttp: false,
      NodePort: 1
    })
  })

  it("an unknown flag is an error naming it, with a suggestion when close", () => {
    const error = fail({ argv: ["--enable-atom-pub-over-htp", "--frobnicate", "7"] })
    expect(error.problems).toEqual([
      {
        option: undefined,
        origin: { _tag: "Cli", flag: "--enable-atom-pub-over-htp" },
        reason: "unknown option",
        hint: "did you mean --enable-atom-pub-over-http?"
      },
      { option: undefined, origin: { _tag: "Cli", flag: "--frobnicate" }, reason: "unknown option" }
    ])
  })

  it("AllowUnknownOptions turns them into warnings", () => {
    const loaded = load({
      argv: ["--frobnicate", "7", "--allow-unknown-options"],
      files: { "vellum.conf": "Colour: blue\n" }
    })
    expect(loaded.warnings).toEqual([
      "unknown option: config file vellum.conf (line 1, key Colour); ignored (AllowUnknownOptions)",
      "unknown option: command line --frobnicate; ignored (AllowUnknownOptions)"
    ])
  })
})

describe("config file", () => {
  it("is read from the default path when present, optional otherwise", () => {
    expect(load({ files: { "vellum.conf": "---\nNodePort: 2300\n" } }).config.NodePort).toBe(2300)
    expect(load({ files: {} }).config.NodePort).toBe(2113)
  })

  it("the file read is named in the loaded configuration (for the start-up line)", () => {
    expect(load({ files: { "vellum.conf": "NodePort: 2300\n" } }).configFile).toBe("vellum.conf")
    expect(load({ argv: ["--config", "/etc/v.yaml"], files: { "/etc/v.yaml": "" } }).configFile).toBe("/etc/v.yaml")
    expect(load({ files: {} }).configFile).toBeUndefined()
  })

  it("is located by --config or the environment, the command line winning", () => {
    const files = { "a.yaml": "NodePort: 1111\n", "b.yaml": "NodePort: 2222\n", "c.yaml": "NodePort: 3333\n" }
    expect(load({ env: { KURRENTDB_CONFIG: "a.yaml" }, files }).config.NodePort).toBe(1111)
    expect(load({ env: { KURRENTDB_CONFIG: "a.yaml", VELLUM_CONFIG: "b.yaml" }, files }).config.NodePort).toBe(2222)
    expect(load({ env: { VELLUM_CONFIG: "b.yaml" }, argv: ["--config", "c.yaml"], files }).config.NodePort).toBe(3333)
  })

  it("a named file must exist", () => {
    const [problem] = fail({ argv: ["--config=/etc/vellum/missing.conf"] }).problems
    expect(problem).toEqual({
      option: "Config",
      origin: { _tag: "Cli", flag: "--config" },
      reason: "config file /etc/vellum/missing.conf does not exist"
    })
  })

  it("an unreadable file is an error with the reason", () => {
    const [problem] = fail({ files: { "vellum.conf": new Error("permission denied") } }).problems
    expect(problem).toMatchObject({ option: "Config", origin: { _tag: "Default" } })
    expect(problem!.reason).toBe("cannot read vellum.conf: permission denied")
  })

  it("cannot name another config file", () => {
    const [problem] = fail({ files: { "vellum.conf": "Config: other.conf\n" } }).problems
    expect(problem!.reason).toBe(
      "can only be set on the command line (--config) or with an environment variable (VELLUM_CONFIG)"
    )
  })

  it("supports nested sections, lists, YAML scalars and any key spelling", () => {
    const config = load({
      files: {
        "vellum.conf": [
          "---",
          "AutoScavenge:",
          "  Enabled: false",
          "memDb: True",
          "stats-period-sec: 3",
          'NodeIp: "0.0.0.0"'
        ].join("\n")
      }
    }).config
    expect(config).toMatchObject({
      AutoScavengeEnabled: false,
      MemDb: true,
      StatsPeriodSec: 3,
      NodeIp: "0.0.0.0"
    })
  })

  it("reads a YAML sequence as a list (GossipSeed)", () => {
    const loaded = load({
      files: { "vellum.conf": "ClusterSize: 3\nGossipSeed:\n  - node1:1112\n  - node2:1112\n" },
      env: { VELLUM_CLUSTER_SECRET: "a development secret" }
    })
    expect(loaded.config.GossipSeed).toEqual(["node1:1112", "node2:1112"])
    expect(loaded.sources.GossipSeed).toMatchObject({ _tag: "Yaml", line: 2 })
  })

  it.each([
    ["NodePort: [1, 2]\n", "NodePort", "expected a single value, got a list"],
    ["NodePort:\n  a: 1\n", "NodePort", "expected a single value, got a mapping"],
    ["NodePort:\n", "NodePort", "has no value"],
    ["MemDb: yes\n", "MemDb", 'expected true or false, got "yes"'],
    ["GossipSeed:\n  - {a: 1}\n", "GossipSeed", "expected a list of plain values"]
  ])("%j is an error naming the option and the line", (content, option, reason) => {
    const [problem] = fail({ files: { "vellum.conf": `# Vellum\n${content}` } }).problems
    expect(problem).toMatchObject({ option, reason, origin: { _tag: "Yaml", file: "vellum.conf", line: 2 } })
  })

  it.each([
    [
      "NodePort: [1\n",
      "is not valid YAML (line 2, column 1): Flow sequence in block collection must be sufficiently indented"
    ],
    ["NodePort: 1\nNodePort: 2\n", "is not valid YAML (line 2, column 1): Map keys must be unique"],
    ["- NodePort\n", "must be a mapping of option names to values"],
    ["just text\n", "must be a mapping of option names to values"]
  ])("unparsable or misshapen file %j is an error naming the file", (content, reason) => {
    const [problem] = fail({ files: { "conf.yaml": content }, argv: ["--config=conf.yaml"] }).problems
    expect(problem!.reason).toContain("config file conf.yaml")
    expect(problem!.reason).toContain(reason)
  })

  it("an empty file is fine", () => {
    expect(load({ files: { "vellum.conf": "" } }).config).toEqual(defaultConfig)
  })

  it("an unknown key is an error with its line", () => {
    const [problem] = fail({ files: { "vellum.conf": "NodePort: 1\nNodePrt: 2\n" } }).problems
    expect(problem).toEqual({
      option: undefined,
      origin: { _tag: "Yaml", file: "vellum.conf", key: "NodePrt", line: 2 },
      reason: "unknown option",
      hint: "did you mean NodePort?"
    })
  })
})

describe("all problems at once, and rules between options", () => {
  it("collects every problem of every source", () => {
    const error = fail({
      argv: ["--log-level=loud"],
      env: { VELLUM_STATS_PERIOD_SEC: "0" },
      files: { "vellum.conf": "RunProjections: some\n" }
    })
    expect(error.problems.map((p) => p.option).sort()).toEqual(["LogLevel", "RunProjections", "StatsPeriodSec"])
    expect(error.problems.map((p) => p.origin?._tag).sort()).toEqual(["Cli", "Env", "Yaml"])
  })

  it("the largest event must fit in a chunk", () => {
    const [problem] = fail({ argv: ["--chunk-size=1048576"] }).problems
    expect(problem).toMatchObject({ option: "ChunkSize", origin: { _tag: "Cli", flag: "--chunk-size" } })
    expect(problem!.reason).toContain("must fit in one chunk")
    expect(load({ argv: ["--chunk-size=1048576", "--max-append-event-size=524288"] }).config.ChunkSize).toBe(1048576)
  })

  it("StatsPeriodSec without WriteStatsToDb warns that it has no effect", () => {
    expect(load({ argv: ["--stats-period-sec=5"] }).warnings).toEqual([
      "StatsPeriodSec only sets how often stats are written with WriteStatsToDb, which is off: it has no effect"
    ])
    expect(load({ argv: ["--stats-period-sec=5", "--write-stats-to-db"] }).warnings).toEqual([])
  })
})
