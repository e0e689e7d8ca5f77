/**
 * How one option of the table is declared: its group, value type, default and where it may be set. The
 * table itself is options.ts (with the cluster's options in clusterOptions.ts).
 */
import type { Either } from "effect"
import { boolean, decodeValue, encodeValue, integer, type ValueType } from "./valueTypes.js"

export type OptionGroup =
  | "Application"
  | "DefaultUser"
  | "Logging"
  | "Auth"
  | "Cluster"
  | "Database"
  | "Interface"
  | "Projection"
  | "AutoScavenge"

/** Group headings, in `--help` order. */
export const groupTitles: Readonly<Record<OptionGroup, string>> = {
  Application: "Application Options",
  DefaultUser: "Default User Options",
  Logging: "Logging Options",
  Auth: "Authentication/Authorization Options",
  Cluster: "Cluster Options",
  Database: "Database Options",
  Interface: "Interface Options",
  Projection: "Projection Options",
  AutoScavenge: "Auto-Scavenge Options"
}

/** Where a value came from, lowest precedence first (CLI > environment > YAML > default). */
export type SourceKind = "default" | "yaml" | "env" | "cli"

export interface OptionDef<A> {
  readonly group: OptionGroup
  readonly description: string
  readonly type: ValueType<A>
  /** Not used to infer `A` (the value type decides it: `oneOf([...])` keeps its literal union). */
  readonly default: NoInfer<A>
  /** The key path when the option is nested (`AutoScavenge:Enabled`); the option's name otherwise. */
  readonly path?: ReadonlyArray<string>
  /** Older names still accepted (with a warning), e.g. HttpPort for NodePort. */
  readonly aliases?: ReadonlyArray<string>
  /**
   * Other names accepted as the option's own (no warning): a nested option's flat name, so that
   * `AutoScavengeEnabled` gives `--auto-scavenge-enabled` and `VELLUM_AUTO_SCAVENGE_ENABLED`.
   */
  readonly alsoNamed?: ReadonlyArray<string>
  /** Shown as `********` in `/info/options` and `--what-if`. */
  readonly sensitive?: boolean
  /** Where it may be set, when not everywhere (passwords: environment only, as in the reference). */
  readonly onlyFrom?: ReadonlyArray<Exclude<SourceKind, "default">>
  readonly deprecation?: string
}

/** Decoding and encoding with the value type erased, so generic code can handle every option alike. */
export interface ErasedCodec {
  readonly decode: (raw: string) => Either.Either<unknown, string>
  readonly encode: (value: unknown) => string
}

export type TableEntry<A> = OptionDef<A> & { readonly codec: ErasedCodec }

export const option = <A>(def: OptionDef<A>): TableEntry<A> => ({
  ...def,
  codec: {
    decode: (raw) => decodeValue(def.type, raw),
    // Only values this option decoded (or its own default) are ever passed back here, so they are `A`s.
    encode: (value) => encodeValue(def.type, value as A)
  }
})

export const KiB = 1024
export const MiB = 1024 * KiB
export const GiB = 1024 * MiB
export const MAX_INT32 = 2_147_483_647

export const flag = (group: OptionGroup, description: string, defaultValue = false) =>
  option({ group, description, type: boolean(), default: defaultValue })

/** A duration in milliseconds, from `min` (1 unless given). */
export const millis = (group: OptionGroup, description: string, defaultValue: number, min = 1) =>
  option({ group, description, type: integer({ min, max: MAX_INT32, unit: "ms" }), default: defaultValue })
