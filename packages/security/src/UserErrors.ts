/**
 * The failures of user management. The users HTTP handlers map each to a status in one place
 * (packages/http/src/users/replies.ts): NotFound 404, Conflict 409, InvalidArgument 400, Unauthorized 401,
 * StoreFailed 500 (507 or 503 when the store refuses writes after a disk error).
 */
import { Schema } from "effect"

export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", { loginName: Schema.String }) {
  override get message() {
    return `User '${this.loginName}' does not exist`
  }
}

/** The login exists with another password (create), or the user changed under a concurrent writer. */
export class UserConflict extends Schema.TaggedError<UserConflict>()("UserConflict", {
  loginName: Schema.String,
  message: Schema.String
}) {}

/** The request is not valid (empty login, login with `:`, empty password, …). */
export class UserInvalidArgument extends Schema.TaggedError<UserInvalidArgument>()("UserInvalidArgument", {
  message: Schema.String
}) {}

/** The caller may not do this (wrong current password on change-password, not an admin, anonymous). */
export class UserUnauthorized extends Schema.TaggedError<UserUnauthorized>()("UserUnauthorized", {
  loginName: Schema.String,
  message: Schema.String
}) {}

/**
 * The user store could not be read or written (storage failure, unreadable user data). `writesRefused`:
 * the store refuses writes after a disk error (DiskFull: the disk is full), which heals by itself.
 */
export class UserStoreFailed extends Schema.TaggedError<UserStoreFailed>()("UserStoreFailed", {
  message: Schema.String,
  writesRefused: Schema.optional(Schema.Literal("DiskFull", "IOError")),
  /** The store's error, when there is one. */
  cause: Schema.optional(Schema.Defect)
}) {}

export type UserError = UserNotFound | UserConflict | UserInvalidArgument | UserUnauthorized | UserStoreFailed
