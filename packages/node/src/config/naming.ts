/**
 * How an option's PascalCase name becomes its command-line flag, environment variable and lookup key.
 *
 * The reference server matches option names case-insensitively and ignores word separators
 * (`--mem-db`, `--MemDb`, `--memdb`, `KURRENTDB_MEM_DB`, YAML `memDb` all mean MemDb); nested keys use
 * `:` on the command line, `__` in the environment and nested mappings in YAML
 * (`AutoScavenge:Enabled`). These functions are that convention, in one place.
 */

/** `MaxMemTableSize` → `max-mem-table-size`. */
export const kebabCase = (pascal: string): string => pascal.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()

/** `MaxMemTableSize` → `MAX_MEM_TABLE_SIZE`. */
export const upperSnakeCase = (pascal: string): string => pascal.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()

/** The flag for a key path: `["AutoScavenge", "Enabled"]` → `--auto-scavenge:enabled`. */
export const cliFlagOf = (path: ReadonlyArray<string>): string => `--${path.map(kebabCase).join(":")}`

/** The environment variable for a key path under a prefix: `VELLUM_AUTO_SCAVENGE__ENABLED`. */
export const envNameOf = (prefix: string, path: ReadonlyArray<string>): string =>
  `${prefix}${path.map(upperSnakeCase).join("__")}`

/** The YAML key path as written in the config file: `AutoScavenge: { Enabled: ... }` → `AutoScavenge:Enabled`. */
export const yamlKeyOf = (path: ReadonlyArray<string>): string => path.join(":")

/**
 * The comparison key: segments joined by `:`, lower case, without `-` or `_`. Environment nesting (`__`)
 * must be turned into `:` before calling this (see `envKeyToPath`).
 */
export const lookupKey = (path: ReadonlyArray<string>): string =>
  path.map((segment) => segment.replace(/[-_]/g, "").toLowerCase()).join(":")

/** Splits an environment variable's name (prefix removed) into key segments: `AUTO_SCAVENGE__ENABLED`. */
export const envKeyToPath = (name: string): ReadonlyArray<string> => name.split("__")

/** Splits a command-line key (dashes removed) into key segments: `auto-scavenge:enabled`. */
export const cliKeyToPath = (key: string): ReadonlyArray<string> => key.split(":")
