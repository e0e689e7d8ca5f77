/**
 * Handlers of the users API: one Effect per request over the Users service, answering a
 * Reply and never failing. The pipeline has already authorized the route (admins, or any authenticated
 * user for `$current` and change-password); the admin routes check again, as the reference's user
 * service does, and answer its 401 envelope.
 *
 * change-password is the user's own: another caller (admins included) gets the bare 401 the reference's
 * first-level policy gives; a wrong current password is the service's 401 envelope.
 */
import { Effect, Either } from "effect"
import { isAdmin, Users, UserUnauthorized, type Principal, type UserError, type UsersService } from "@vellum/security"
import { escapeDataString } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import { badRequest, unauthorizedBare } from "../replies.js"
import { parseChangePassword, parseCreateUser, parseResetPassword, parseUpdateUser } from "./body.js"
import {
  commandReply,
  currentUserReply,
  userErrorReply,
  userListReply,
  userReply,
  type ErrorShape
} from "./documents.js"

export interface UsersRequest {
  readonly principal: Principal
  /** `login` for the `/users/{login}…` routes (percent-decoded). */
  readonly params: Readonly<Record<string, string>>
  readonly body: Uint8Array | undefined
  /** `scheme://host[:port][/prefix]` for links and Location. */
  readonly baseUrl: string
}

export type UsersHandler = (input: UsersRequest) => Effect.Effect<Reply, never, Users>

const Details: ErrorShape = { _tag: "Details" }
const command = (loginName: string): ErrorShape => ({ _tag: "Command", loginName })

/** Runs `work` with the Users service; its errors become replies of the given shape. */
const withUsers = (
  shape: ErrorShape,
  work: (users: UsersService) => Effect.Effect<Reply, UserError>
): Effect.Effect<Reply, never, Users> =>
  Effect.flatMap(Users, (users) =>
    Effect.catchAll(work(users), (error) => Effect.succeed(userErrorReply(error, shape)))
  )

/** An admin-only operation: anyone else gets the service's Unauthorized envelope. */
const asAdmin = (
  input: UsersRequest,
  shape: ErrorShape,
  work: (users: UsersService) => Effect.Effect<Reply, UserError>
) =>
  isAdmin(input.principal)
    ? withUsers(shape, work)
    : Effect.succeed(
        userErrorReply(
          new UserUnauthorized({ loginName: input.principal.name, message: "Only $admins manage users" }),
          shape
        )
      )

/** A parsed body, or the 400 that says what is wrong with it. */
const withBody = <A>(parsed: Either.Either<A, string>, use: (value: A) => Effect.Effect<Reply, never, Users>) =>
  Either.match(parsed, { onLeft: (message) => Effect.succeed(badRequest(message)), onRight: use })

const login = (input: UsersRequest): string => input.params["login"] ?? ""

/** `GET /users`, `GET /users/`. */
export const listUsers: UsersHandler = (input) =>
  asAdmin(input, Details, (users) => Effect.map(users.list, (list) => userListReply(list, input.baseUrl)))

/** `GET /users/{login}`. */
export const getUser: UsersHandler = (input) =>
  asAdmin(input, Details, (users) => Effect.map(users.get(login(input)), (user) => userReply(user, input.baseUrl)))

/** `GET /users/$current`. */
export const getCurrentUser: UsersHandler = (input) =>
  withUsers(Details, (users) => Effect.map(users.current(input.principal), currentUserReply))

/** `POST /users`, `POST /users/`: 201 with the escaped Location of the user. */
export const createUser: UsersHandler = (input) =>
  withBody(parseCreateUser(input.body), (user) =>
    asAdmin(input, command(user.loginName), (users) =>
      Effect.as(
        users.create(user),
        commandReply(user.loginName, 201, { Location: `${input.baseUrl}/users/${escapeDataString(user.loginName)}` })
      )
    )
  )

/** `PUT /users/{login}`: `{fullName, groups}`. */
export const updateUser: UsersHandler = (input) =>
  withBody(parseUpdateUser(input.body), (changes) =>
    asAdmin(input, command(login(input)), (users) =>
      Effect.as(users.update(login(input), changes), commandReply(login(input)))
    )
  )

/** `DELETE /users/{login}`. */
export const deleteUser: UsersHandler = (input) =>
  asAdmin(input, command(login(input)), (users) => Effect.as(users.delete(login(input)), commandReply(login(input))))

/** `POST /users/{login}/command/enable`. */
export const enableUser: UsersHandler = (input) =>
  asAdmin(input, command(login(input)), (users) => Effect.as(users.enable(login(input)), commandReply(login(input))))

/** `POST /users/{login}/command/disable`. */
export const disableUser: UsersHandler = (input) =>
  asAdmin(input, command(login(input)), (users) => Effect.as(users.disable(login(input)), commandReply(login(input))))

/** `POST /users/{login}/command/reset-password`: `{newPassword}`. */
export const resetPassword: UsersHandler = (input) =>
  withBody(parseResetPassword(input.body), ({ newPassword }) =>
    asAdmin(input, command(login(input)), (users) =>
      Effect.as(users.resetPassword(login(input), newPassword), commandReply(login(input)))
    )
  )

/** `POST /users/{login}/command/change-password`: `{currentPassword, newPassword}`, the user's own only. */
export const changePassword: UsersHandler = (input) => {
  if (input.principal.anonymous || input.principal.name !== login(input)) return Effect.succeed(unauthorizedBare)
  return withBody(parseChangePassword(input.body), ({ currentPassword, newPassword }) =>
    withUsers(command(login(input)), (users) =>
      Effect.as(users.changePassword(login(input), currentPassword, newPassword), commandReply(login(input)))
    )
  )
}
