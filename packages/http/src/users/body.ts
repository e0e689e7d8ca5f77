/**
 * Request bodies of the users API, read the way the reference binds them:
 * lenient JSON (lenientJson.ts), property names matched ignoring case, unknown properties ignored, `null`
 * the same as absent, a number where a string is expected taken as its text (Newtonsoft converts it).
 * Anything else wrong is a message for a 400: the reference has no defined answer (its handler faults and
 * the request times out).
 */
import { Either } from "effect"
import type { NewUser, UserChanges } from "@vellum/security"
import { memberIgnoreCase, tryParseLenientJson, type JsonValue } from "../lenientJson.js"

type Parsed<A> = Either.Either<A, string>

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The body as a JSON object, or why it is not one. */
const jsonObject = (body: Uint8Array | undefined): Parsed<JsonValue> => {
  if (body === undefined || body.length === 0) return Either.left("A JSON body is required")
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    return Either.left("The body is not valid UTF-8")
  }
  const value = tryParseLenientJson(text)
  if (value === undefined) return Either.left("The body is not valid JSON")
  return value.kind === "object" ? Either.right(value) : Either.left("The body must be a JSON object")
}

/** A string property: a string, or a number as its literal text; undefined when absent or null. */
const stringMember = (body: JsonValue, name: string): Parsed<string | undefined> => {
  const value = memberIgnoreCase(body, name)
  if (value === undefined || value.kind === "null") return Either.right(undefined)
  if (value.kind === "string") return Either.right(value.value)
  if (value.kind === "number") return Either.right(value.text)
  return Either.left(`'${name}' must be a string`)
}

const requiredString = (body: JsonValue, name: string): Parsed<string> =>
  Either.flatMap(stringMember(body, name), (value) =>
    value === undefined ? Either.left(`'${name}' is required`) : Either.right(value)
  )

/** `groups`: an array of strings (numbers as text); undefined when absent or null. */
const groupsMember = (body: JsonValue): Parsed<ReadonlyArray<string> | undefined> => {
  const value = memberIgnoreCase(body, "groups")
  if (value === undefined || value.kind === "null") return Either.right(undefined)
  if (value.kind !== "array") return Either.left("'groups' must be an array of strings")
  const groups: Array<string> = []
  for (const item of value.items) {
    if (item.kind === "string") groups.push(item.value)
    else if (item.kind === "number") groups.push(item.text)
    else return Either.left("'groups' must be an array of strings")
  }
  return Either.right(groups)
}

/** `POST /users`: `{loginName, fullName, groups, password}`; login and password are required. */
export const parseCreateUser = (body: Uint8Array | undefined): Parsed<NewUser> =>
  Either.gen(function* () {
    const json = yield* jsonObject(body)
    return {
      loginName: yield* requiredString(json, "loginName"),
      fullName: (yield* stringMember(json, "fullName")) ?? "",
      groups: (yield* groupsMember(json)) ?? [],
      password: yield* requiredString(json, "password")
    }
  })

/** `PUT /users/{login}`: `{fullName, groups}`; an absent field keeps its value. */
export const parseUpdateUser = (body: Uint8Array | undefined): Parsed<UserChanges> =>
  Either.gen(function* () {
    const json = yield* jsonObject(body)
    const fullName = yield* stringMember(json, "fullName")
    const groups = yield* groupsMember(json)
    return { ...(fullName !== undefined ? { fullName } : {}), ...(groups !== undefined ? { groups } : {}) }
  })

/** `POST /users/{login}/command/reset-password`: `{newPassword}`. */
export const parseResetPassword = (body: Uint8Array | undefined): Parsed<{ readonly newPassword: string }> =>
  Either.gen(function* () {
    const json = yield* jsonObject(body)
    return { newPassword: yield* requiredString(json, "newPassword") }
  })

/** `POST /users/{login}/command/change-password`: `{currentPassword, newPassword}`. */
export const parseChangePassword = (
  body: Uint8Array | undefined
): Parsed<{ readonly currentPassword: string; readonly newPassword: string }> =>
  Either.gen(function* () {
    const json = yield* jsonObject(body)
    return {
      currentPassword: yield* requiredString(json, "currentPassword"),
      newPassword: yield* requiredString(json, "newPassword")
    }
  })
