/**
 * The node's loggers, from `LogConsoleFormat`, `LogLevel` and `Log`: the console gets JSON lines (the
 * `jsonLogger`) or Effect's plain text logger; a log file, when there is one, always gets JSON lines; both
 * drop messages below the level. Sinks are parameters, so tests capture lines without a process.
 */
import { Layer, Logger } from "effect"
import { jsonLogger, type LogSink } from "@vellum/platform"
import { toLogLevel } from "./config/derive.js"
import type { Config } from "./config/options.js"

export const layer = (
  config: Pick<Config, "LogConsoleFormat" | "LogLevel">,
  sinks: { readonly console: LogSink; readonly file: LogSink | undefined }
): Layer.Layer<never> =>
  Layer.mergeAll(
    config.LogConsoleFormat === "Json" ? Logger.replace(Logger.defaultLogger, jsonLogger(sinks.console)) : Layer.empty,
    sinks.file === undefined ? Layer.empty : Logger.add(jsonLogger(sinks.file)),
    Logger.minimumLogLevel(toLogLevel(config.LogLevel))
  )
