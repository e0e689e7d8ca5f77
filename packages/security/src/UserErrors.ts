/**
 * The failures of user management. The users HTTP handlers map each to a status in one place
 * (packages/http/src/users/replies.ts): NotFound 404, Conflict 409, InvalidArgument 400, Unauthorized 401,
 * StoreFailed 500 (507 or 503 when the store refuses writes after a disk error).
 */
import { Data } from "effect"

export class UserNotFound extends Data.TaggedError("UserNotFound")<{ readonly loginName: string }> {
  override get message() {
    return `User '${this.loginName}' does not exist`
  }
}

/** The login exists with another password (create), or the user changed under a concurrent writer. */
export class UserConflict extends Data.TaggedError("UserConflict")<{ readonly loginName: string; readonly reason: string }> {}

/** The request is not valid (empty login, login with `:`, empty password, …). */
export class UserInvalidArgument extends Data.TaggedError("UserInvalidArgument")<{ readonly reason: string }> {}

/** The caller may not do this (wrong current password on change-password, not an admin, anonymous). */
export class UserUnauthorized extends Data.TaggedError("UserUnauthorized")<{ readonly loginName: string; readonly reason: string }> {}

/**
 * The user store could not be read or written (storage failure, unreadable user data). `writesRefused`:
 * the store refuses writes after a disk error (DiskFull: the disk is full), which heals by itself.
 */
export class UserStoreFailed extends Data.TaggedError("UserStoreFailed")<{
  readonly reason: string
  readonly writesRefused?: "DiskFull" | "IOError"
}> {}

export type UserError = UserNotFound | UserConflict | UserInvalidArgument | UserUnauthorized | UserStoreFailed
