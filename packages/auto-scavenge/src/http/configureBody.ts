/**
 * The body of `POST /auto-scavenge/configure`, read as the reference reads it: a JSON object whose
 * `schedule` (case-sensitive; other members are ignored) is a CRON expression in the reference's dialect.
 *
 * - A Content-Type that is not JSON (`application/json` or any `…+json`), or none, is a 500: the reference's
 *   JSON reader throws outside its JSON error handling there.
 * - The rest are 400s with a message: `null` is "Invalid payload"; no `schedule` gives System.Text.Json's
 *   missing-required-property message, naming the reference's payload type, as clients have seen it; a
 *   `schedule` that is not a string (`null` included, which the reference lets through to fail later) is
 *   "CRON expression can only be a string"; one that does not parse is "Invalid CRON expression". Malformed
 *   JSON and a body that is not an object say so in our own words.
 */
import { parseMediaType } from "@vellum/http"
import { parseCron, type CronSchedule } from "../cron/Cron.js"

export type ConfigureBody =
  | { readonly _tag: "Schedule"; readonly schedule: CronSchedule }
  /** 400, the message as a JSON string. */
  | { readonly _tag: "Rejected"; readonly message: string }
  /** 500: the body is not declared as JSON. */
  | { readonly _tag: "NotJson"; readonly detail: string }

/** The .NET type the reference deserialises the body into; its name is part of the missing-property message. */
const PAYLOAD_TYPE = "EventStore.AutoScavenge.AutoScavengePlugin+AutoScavengeConfigurationPayload"

export const MISSING_SCHEDULE = `JSON deserialization for type '${PAYLOAD_TYPE}' was missing required properties, including the following: schedule`
export const INVALID_PAYLOAD = "Invalid payload"
export const SCHEDULE_NOT_STRING = "CRON expression can only be a string"
export const INVALID_CRON = "Invalid CRON expression"
export const NOT_JSON_BODY = "The body is not valid JSON"
export const NOT_AN_OBJECT = 'The body must be a JSON object such as {"schedule":"0 3 * * *"}'

/** `application/json`, or a structured `+json` type, with any parameters (ASP.NET's HasJsonContentType). */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  const parsed = contentType === undefined ? undefined : parseMediaType(contentType)
  if (parsed === undefined) return false
  const type = parsed.type.trim().toLowerCase()
  const subtype = parsed.subtype.trim().toLowerCase()
  return (type === "application" && subtype === "json") || subtype.endsWith("+json")
}

const decoder = new TextDecoder("utf-8", { fatal: true })

const parseJson = (body: Uint8Array | undefined): { readonly ok: true; readonly value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(decoder.decode(body ?? new Uint8Array(0))) }
  } catch {
    return { ok: false }
  }
}

export const readConfigureBody = (contentType: string | undefined, body: Uint8Array | undefined): ConfigureBody => {
  if (!isJsonContentType(contentType)) {
    return {
      _tag: "NotJson",
      detail: `Expected a JSON body (Content-Type: application/json), got ${contentType === undefined ? "no Content-Type" : `'${contentType}'`}`
    }
  }
  const parsed = parseJson(body)
  if (!parsed.ok) return { _tag: "Rejected", message: NOT_JSON_BODY }
  const value = parsed.value
  if (value === null) return { _tag: "Rejected", message: INVALID_PAYLOAD }
  if (typeof value !== "object" || Array.isArray(value)) return { _tag: "Rejected", message: NOT_AN_OBJECT }
  if (!Object.hasOwn(value, "schedule")) return { _tag: "Rejected", message: MISSING_SCHEDULE }
  const text = (value as Record<string, unknown>)["schedule"]
  if (typeof text !== "string") return { _tag: "Rejected", message: SCHEDULE_NOT_STRING }
  const schedule = parseCron(text)
  return schedule === undefined ? { _tag: "Rejected", message: INVALID_CRON } : { _tag: "Schedule", schedule }
}
