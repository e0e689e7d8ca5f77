// dependency-cruiser config (`npm run lint` runs it after ESLint). It holds the dependency direction of
// docs/architecture.md: a workspace imports only the workspaces its row below allows, and no module takes
// part in an import cycle, inside a package or across packages. Type-only imports count: a cycle of types
// still ties the modules together.

// The one table of allowed dependencies between workspaces. A workspace imports itself and what its row
// names, nothing else; anything under packages/ importing simulation/ is therefore refused.
export const allowedDependencies = {
  platform: [],
  storage: ["platform"],
  security: ["platform", "storage"],
  scavenge: ["platform", "storage"],
  cluster: ["platform", "storage"],
  http: ["platform", "storage", "security", "scavenge", "cluster"],
  "auto-scavenge": ["platform", "storage", "security", "scavenge", "cluster", "http"],
  subscriptions: ["platform", "storage", "security", "cluster", "http"],
  projections: ["platform", "storage", "security", "cluster", "http"],
  node: [
    "platform",
    "storage",
    "security",
    "scavenge",
    "cluster",
    "http",
    "auto-scavenge",
    "subscriptions",
    "projections"
  ],
  simulation: [
    "platform",
    "storage",
    "security",
    "scavenge",
    "cluster",
    "http",
    "auto-scavenge",
    "subscriptions",
    "projections",
    "node"
  ],
  "property-tests": ["platform", "storage", "simulation"],
  bench: ["platform", "storage", "scavenge", "projections"]
}

const topLevel = new Set(["simulation", "property-tests", "bench"])
export const workspaceFolder = (name) => (topLevel.has(name) ? name : `packages/${name}`)

const workspaces = Object.keys(allowedDependencies)
const foldersPattern = (names) => `^(${names.map(workspaceFolder).join("|")})/`

const directionRules = workspaces.flatMap((name) => {
  const refused = workspaces.filter((other) => other !== name && !allowedDependencies[name].includes(other))
  return refused.length === 0
    ? []
    : [
        {
          name: `${name}-imports-only-its-allowed-dependencies`,
          comment: `${workspaceFolder(name)} may import ${allowedDependencies[name].join(", ") || "no other workspace"} (dependency-cruiser.config.js)`,
          severity: "error",
          from: { path: `^${workspaceFolder(name)}/` },
          to: { path: foldersPattern(refused) }
        }
      ]
})

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    ...directionRules,
    {
      name: "no-import-cycle",
      comment: "modules in an import cycle: move the shared type or constant to the module it belongs in",
      severity: "error",
      from: {},
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "default"] },
    cache: false
  }
}
