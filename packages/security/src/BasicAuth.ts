/**
 * Parsing of the credentials headers, pure:
 *
 * - `Authorization: Basic <base64(login:password)>`: the scheme is compared case-sensitively, so `basic …` or
 *   `Bearer …` are not Basic and the request goes on as anonymous. The decoded text must contain `:`; the
 *   login is what precedes the first one, the password may itself contain `:`.
 * - `Kurrent-TrustedAuth` / `ES-TrustedAuth` (only when trusted auth is enabled): `login` or
 *   `login; group1, group2`, accepted without a password.
 *
 * A Basic header that cannot be decoded (not base64, not UTF-8, no `:`) is `MalformedCredentials`, which the
 * HTTP layer answers with 400 and the reason. The reference answers 500 for bad base64 (an exception) and
 * treats a missing `:` as "no credentials"; a clear 400 tells the client what is wrong instead.
 */
import { Either } from "effect"
import { MalformedCredentials } from "./Principal.js"

export interface BasicCredentials {
  readonly login: string
  readonly password: string
}

/** Strict base64: the standard alphabet, padded to a multiple of four (as .NET's Convert.FromBase64String). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The Basic credentials of an `Authorization` header value: `Right(undefined)` when there is no header or its
 * scheme is not `Basic`, `Right(credentials)` when it decodes, `Left(MalformedCredentials)` otherwise.
 */
export const parseBasicAuthorization = (
  header: string | undefined
): Either.Either<BasicCredentials | undefined, MalformedCredentials> => {
  if (header === undefined) return Either.right(undefined)
  const value = header.trim()
  const space = value.search(/[ \t]/)
  const scheme = space < 0 ? value : value.slice(0, space)
  if (scheme !== "Basic") return Either.right(undefined)
  const token = space < 0 ? "" : value.slice(space + 1).trim()
  if (token.length === 0) return Either.left(new MalformedCredentials({ message: "The Basic credentials are empty" }))
  if (!BASE64.test(token))
    return Either.left(new MalformedCredentials({ message: "The Basic credentials are not valid base64" }))
  let text: string
  try {
    text = utf8.decode(Buffer.from(token, "base64"))
  } catch {
    return Either.left(new MalformedCredentials({ message: "The Basic credentials are not valid UTF-8" }))
  }
  const colon = text.indexOf(":")
  if (colon < 0)
    return Either.left(
      new MalformedCredentials({ message: "The Basic credentials have no ':' between the login and the password" })
    )
  return Either.right({ login: text.slice(0, colon), password: text.slice(colon + 1) })
}

export interface TrustedIdentity {
  readonly login: string
  readonly groups: ReadonlyArray<string>
}

/** A trusted-auth header value: `login` or `login; group1, group2` (names trimmed, empty groups dropped). */
export const parseTrustedAuth = (value: string): Either.Either<TrustedIdentity, MalformedCredentials> => {
  const semicolon = value.indexOf(";")
  const login = (semicolon < 0 ? value : value.slice(0, semicolon)).trim()
  if (login.length === 0)
    return Either.left(new MalformedCredentials({ message: "The trusted auth header names no login" }))
  const groups =
    semicolon < 0
      ? []
      : value
          .slice(semicolon + 1)
          .split(",")
          .map((g) => g.trim())
          .filter((g) => g.length > 0)
  return Either.right({ login, groups })
}

/** The trusted-auth header of a request (lower-cased names): `kurrent-trustedauth`, else the legacy `es-trustedauth`. */
export const trustedAuthHeader = (headers: Readonly<Record<string, string | undefined>>): string | undefined =>
  headers["kurrent-trustedauth"] ?? headers["es-trustedauth"]
