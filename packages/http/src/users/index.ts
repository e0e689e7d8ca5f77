// The users API: routes for the pipeline, the handlers, body parsing and documents.
export { usersRoutes, UsersMediaTypes } from "./routes.js"
export {
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
  type UsersHandler,
  type UsersRequest
} from "./handlers.js"
export { parseChangePassword, parseCreateUser, parseResetPassword, parseUpdateUser } from "./body.js"
export {
  commandReply,
  currentUserReply,
  formatUserDate,
  userErrorReply,
  userListReply,
  userReply,
  type ErrorShape
} from "./documents.js"
