/**
 * The value types an option can have. Every source hands values over as text (command line,
 * environment, YAML scalars turned into strings — as in the reference, whose configuration system is
 * string-based), so each type is a Schema from `string` to the typed value with a reason a person can act
 * on, plus the JSON-schema fragment `/info/options` shows for it (the reference's `schema` field).
 */
import { Either, ParseResult, Schema } from "effect"

export type ValueKind = "boolean" | "integer" | "string" | "enum" | "list"

/** The `schema` object of an `/info/options` entry (a small JSON-schema fragment). */
export type OptionJsonSchema = Readonly<
  Record<string, string | ReadonlyArray<string> | Readonly<Record<string, string>>>
>

export interface ValueType<A> {
  readonly kind: ValueKind
  /** Text → value (decode) and value → canonical text (encode). */
  readonly schema: Schema.Schema<A, string>
  /** What the value looks like in `--help`, e.g. `<integer>`. */
  readonly placeholder: string
  readonly jsonSchema: (name: string) => OptionJsonSchema
  /** The allowed values, for enums. */
  readonly choices?: ReadonlyArray<string>
}

/** Decodes text with a value type; the failure is the first reason the schema gives. */
export const decodeValue = <A>(type: ValueType<A>, raw: string): Either.Either<A, string> =>
  Either.mapLeft(
    Schema.decodeEither(type.schema)(raw),
    (error) => ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is not valid"
  )

export const encodeValue = <A>(type: ValueType<A>, value: A): string => Schema.encodeSync(type.schema)(value)

const fromText = <A>(
  decode: (text: string) => Either.Either<A, string>,
  encode: (value: A) => string,
  to: Schema.Schema<A>
): Schema.Schema<A, string> =>
  Schema.transformOrFail(Schema.String, to, {
    strict: true,
    decode: (text, _options, ast) =>
      Either.match(decode(text), {
        onLeft: (reason) => ParseResult.fail(new ParseResult.Type(ast, text, reason)),
        onRight: ParseResult.succeed
      }),
    encode: (value) => ParseResult.succeed(encode(value))
  })

const quoted = (text: string): string => JSON.stringify(text)

/** `true` / `false`, any letter case (the reference parses booleans the .NET way, case-insensitively). */
export const boolean = (): ValueType<boolean> => ({
  kind: "boolean",
  placeholder: "<true|false>",
  jsonSchema: () => ({ type: "boolean" }),
  schema: fromText(
    (text) => {
      const word = text.trim().toLowerCase()
      return word === "true"
        ? Either.right(true)
        : word === "false"
          ? Either.right(false)
          : Either.left(`expected true or false, got ${quoted(text)}`)
    },
    (value) => (value ? "true" : "false"),
    Schema.Boolean
  )
})

export interface IntegerBounds {
  readonly min: number
  readonly max: number
  /** Unit of the value, shown in help and as the reference's `x-unit` (`ms`, `s`, `m`, `d`). */
  readonly unit?: string
}

/** A whole number within bounds; digits only (no `1e3`, no `0x10`, no fractions). */
export const integer = ({ max, min, unit }: IntegerBounds): ValueType<number> => ({
  kind: "integer",
  placeholder: unit === undefined ? "<integer>" : `<integer ${unit}>`,
  jsonSchema: (): OptionJsonSchema => (unit === undefined ? { type: "integer" } : { type: "integer", "x-unit": unit }),
  schema: fromText(
    (text) => {
      const trimmed = text.trim()
      if (!/^[+-]?\d+$/.test(trimmed)) return Either.left(`expected an integer, got ${quoted(text)}`)
      const value = Number(trimmed)
      return value < min || value > max
        ? Either.left(`must be between ${min} and ${max}, got ${trimmed}`)
        : Either.right(value)
    },
    String,
    Schema.Int
  )
})

/** Free text; `nonEmpty` rejects the empty string (paths, passwords). */
export const text = (
  options: { readonly nonEmpty?: boolean; readonly placeholder?: string } = {}
): ValueType<string> => ({
  kind: "string",
  placeholder: options.placeholder ?? "<text>",
  jsonSchema: () => ({ type: "string" }),
  schema: fromText(
    (value) =>
      options.nonEmpty === true && value.trim() === "" ? Either.left("must not be empty") : Either.right(value),
    (value) => value,
    Schema.String
  )
})

/** One of a fixed set of words, matched case-insensitively and kept in its canonical spelling. */
export const oneOf = <const Choices extends ReadonlyArray<string>>(choices: Choices): ValueType<Choices[number]> => {
  const byLowerCase = new Map(choices.map((choice) => [choice.toLowerCase(), choice]))
  return {
    kind: "enum",
    placeholder: `<${choices.join("|")}>`,
    choices,
    jsonSchema: (name) => ({ type: "string", name, enum: choices }),
    schema: fromText<Choices[number]>(
      (value) => {
        const choice = byLowerCase.get(value.trim().toLowerCase())
        return choice === undefined
          ? Either.left(`expected one of ${choices.join(", ")}, got ${quoted(value)}`)
          : Either.right(choice)
      },
      (value) => value,
      Schema.Literal(...choices)
    )
  }
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
// A loose IPv6 check (hex groups and colons, optionally an embedded IPv4 tail); the listener rejects the rest.
const IPV6 = /^(?=.*:)[0-9a-fA-F:]+(:(\d{1,3}\.){3}\d{1,3})?$/
const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/

const isIpAddress = (text: string): boolean => IPV4.test(text) || (IPV6.test(text) && text.split("::").length <= 2)

/** Text, trimmed, that `accepts` takes; `expected` says what was wanted when it does not. */
const checkedText = (
  placeholder: string,
  expected: string,
  accepts: (trimmed: string) => boolean
): ValueType<string> => ({
  kind: "string",
  placeholder,
  jsonSchema: () => ({ type: "string" }),
  schema: fromText(
    (value) => {
      const trimmed = value.trim()
      return accepts(trimmed) ? Either.right(trimmed) : Either.left(`expected ${expected}, got ${quoted(value)}`)
    },
    (value) => value,
    Schema.String
  )
})

/** An IPv4 or IPv6 address (the reference's NodeIp is an address, not a host name). */
export const ipAddress = (): ValueType<string> => checkedText("<ip address>", "an IPv4 or IPv6 address", isIpAddress)

/** A host name or IP address clients or peers can reach; empty for none. */
export const hostName = (): ValueType<string> =>
  checkedText("<host>", "a host name or IP address", (text) => text === "" || HOST_NAME.test(text) || isIpAddress(text))

const ENDPOINT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/

/** A comma-separated list of `host:port` endpoints (a YAML sequence is joined with commas first). */
export const endpointList = (): ValueType<ReadonlyArray<string>> => ({
  kind: "list",
  placeholder: "<host:port,...>",
  jsonSchema: () => ({ type: "array", items: { type: "string" } }),
  schema: fromText<ReadonlyArray<string>>(
    (value) => {
      const items = value
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== "")
      for (const item of items) {
        const match = ENDPOINT.exec(item)
        const port = match === null ? NaN : Number(match[2])
        if (!(port >= 1 && port <= 65535)) return Either.left(`expected host:port endpoints, got ${quoted(item)}`)
      }
      return Either.right(items)
    },
    (items) => items.join(","),
    Schema.Array(Schema.String)
  )
})
