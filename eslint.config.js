// ESLint flat config. Besides ordinary TypeScript hygiene it enforces Vellum's determinism rules
// (docs/architecture.md, "Determinism"): production code may read time, randomness, files, sockets and
// timers only through Effect services, so the same code runs unchanged inside the deterministic simulator.
// Only the live layers (the `live/` folders under packages/*/src and simulation/src) and the node's `main.ts`
// may touch the real world; a file's name earns no exemption. The dependency direction is
// checked by dependency-cruiser (dependency-cruiser.config.js), which `npm run lint` runs next.
import js from "@eslint/js"
import tseslint from "typescript-eslint"

const why =
  "breaks determinism: use Effect's Clock/Random, the Disk service or Effect timers (see docs/architecture.md)"

export const determinismRules = {
  "no-restricted-globals": [
    "error",
    ...[
      "setTimeout",
      "setInterval",
      "setImmediate",
      "clearTimeout",
      "clearInterval",
      "clearImmediate",
      "queueMicrotask",
      "fetch",
      "performance"
    ].map((name) => ({ name, message: `${name} ${why}` }))
  ],
  "no-restricted-properties": [
    "error",
    { object: "Date", property: "now", message: `Date.now ${why}` },
    { object: "Math", property: "random", message: `Math.random ${why}` },
    { object: "crypto", property: "randomUUID", message: `crypto.randomUUID ${why}` },
    { object: "crypto", property: "getRandomValues", message: `crypto.getRandomValues ${why}` },
    { object: "process", property: "hrtime", message: `process.hrtime ${why}` },
    {
      object: "process",
      property: "env",
      message: "configuration comes from the node's Config service, not process.env"
    },
    { object: "performance", property: "now", message: `performance.now ${why}` }
  ],
  "no-restricted-syntax": [
    "error",
    { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: `new Date() ${why}` },
    { selector: "CallExpression[callee.name='Date'][arguments.length=0]", message: `Date() ${why}` }
  ],
  "no-restricted-imports": [
    "error",
    {
      paths: [
        ...[
          "fs",
          "node:fs",
          "fs/promises",
          "node:fs/promises",
          "net",
          "node:net",
          "dgram",
          "node:dgram",
          "timers",
          "node:timers",
          "timers/promises",
          "node:timers/promises",
          "perf_hooks",
          "node:perf_hooks",
          "child_process",
          "node:child_process",
          "worker_threads",
          "node:worker_threads"
        ].map((name) => ({ name, message: `${name} ${why}` })),
        ...["crypto", "node:crypto"].map((name) => ({
          name,
          importNames: [
            "randomUUID",
            "randomBytes",
            "randomInt",
            "randomFillSync",
            "randomFill",
            "getRandomValues",
            "webcrypto"
          ],
          message: `random sources from ${name} ${why}`
        }))
      ]
    }
  ]
}

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", "data/**", ".bench-data/**", "coverage/**", ".prof/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: "readonly", process: "readonly", Buffer: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }
      ],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-namespace": "off",
      "no-constant-condition": ["error", { checkLoops: false }]
    }
  },
  {
    // Production code and the simulator: deterministic by construction.
    files: ["packages/*/src/**/*.ts", "simulation/src/**/*.ts"],
    ignores: ["packages/*/src/**/live/**", "simulation/src/live/**", "packages/node/src/main.ts"],
    rules: determinismRules
  },
  {
    files: ["**/test/**/*.ts", "**/*.test.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off", "@typescript-eslint/no-non-null-assertion": "off" }
  }
)
