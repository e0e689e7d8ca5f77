/**
 * The loaded configuration as a service, provided once by the composition root. Components below
 * `node` do not depend on it (they cannot import this package); they receive their own slices
 * (`toStorageConfig`, ...) from the root.
 */
import { Context } from "effect"
import type { LoadedConfig } from "./LoadedConfig.js"

export class NodeConfig extends Context.Tag("@vellum/node/NodeConfig")<NodeConfig, LoadedConfig>() {}
