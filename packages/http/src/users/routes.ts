/**
 * Every route of the users API as RouteDefs for the pipeline. First-level access:
 * `$admins` for management, any authenticated user for `$current` and change-password (the handler then
 * insists on the user's own login). Bodies are JSON only and answers are JSON only: the reference also
 * lists `text/xml`, whose shapes nothing documents, so an XML body is a 415 and `Accept: text/xml` a 406
 * here rather than a guess. `/users` and `/users/` are both routes (no redirect), as upstream.
 */
import type { Users } from "@vellum/security"
import type { Method, RouteDef } from "../Route.js"
import {
  changePassword,
  createUser,
  deleteUser,
  disableUser,
  enableUser,
  getCurrentUser,
  getUser,
  listUsers,
  resetPassword,
  updateUser,
  type UsersHandler
} from "./handlers.js"

export const UsersMediaTypes: ReadonlyArray<string> = ["application/json"]

type UsersRoute = RouteDef<Users>

const route = (
  method: Method,
  path: string,
  access: UsersRoute["access"],
  handler: UsersHandler,
  withBody = false
): UsersRoute => ({
  method,
  path,
  access,
  // Every change to a user is an event in the user's stream: a write, which only the leader serves.
  ...(method === "GET" ? {} : { writes: true }),
  ...(withBody ? { requestCodecs: UsersMediaTypes } : {}),
  responseCodecs: UsersMediaTypes,
  handle: handler
})

export const usersRoutes: ReadonlyArray<UsersRoute> = [
  route("GET", "/users", "admins", listUsers),
  route("GET", "/users/", "admins", listUsers),
  route("GET", "/users/$current", "authenticated", getCurrentUser),
  route("GET", "/users/{login}", "admins", getUser),
  route("POST", "/users", "admins", createUser, true),
  route("POST", "/users/", "admins", createUser, true),
  route("PUT", "/users/{login}", "admins", updateUser, true),
  route("DELETE", "/users/{login}", "admins", deleteUser),
  route("POST", "/users/{login}/command/enable", "admins", enableUser),
  route("POST", "/users/{login}/command/disable", "admins", disableUser),
  route("POST", "/users/{login}/command/reset-password", "admins", resetPassword, true),
  route("POST", "/users/{login}/command/change-password", "authenticated", changePassword, true)
]
