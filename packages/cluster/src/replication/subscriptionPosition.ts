/**
 * Where a follower's log and the leader's part: the position from which the leader replicates to a
 * follower that subscribes, computed from epochs (each epoch record starts a leader's term at a position).
 * Everything the follower has past it is a divergent tail it must truncate (within `--max-truncation`).
 *
 * The rule:
 * - a follower that sends no epochs starts at 0 when its log is empty; with a non-empty log and no epochs
 *   it cannot be placed (an error);
 * - otherwise the common epoch is the follower's newest epoch that the leader has too (same position,
 *   number and id); with none, the follower replicates everything again from 0;
 * - from the common epoch, the follower's log is good up to its next epoch (which the leader does not
 *   have), or to its end when it has none;
 * - and the leader's log agrees with it only up to the leader's own next epoch after the common one, or to
 *   the leader's end when the common epoch is its last.
 */
export interface Epoch {
  readonly position: number
  readonly number: number
  readonly id: string
}

export type SubscriptionPosition =
  { readonly _tag: "From"; readonly position: number } | { readonly _tag: "Unplaceable"; readonly reason: string }

const same = (a: Epoch, b: Epoch): boolean => a.position === b.position && a.number === b.number && a.id === b.id

/**
 * @param follower the follower's epochs, newest first (it sends its last few), and its writer position
 * @param leader every epoch the leader has, oldest first, and its writer position
 */
export const subscriptionPosition = (
  follower: { readonly epochs: ReadonlyArray<Epoch>; readonly writer: number },
  leader: { readonly epochs: ReadonlyArray<Epoch>; readonly writer: number }
): SubscriptionPosition => {
  if (follower.epochs.length === 0) {
    return follower.writer === 0
      ? { _tag: "From", position: 0 }
      : { _tag: "Unplaceable", reason: `the follower has ${follower.writer} bytes of log but no epoch` }
  }
  const commonIndex = follower.epochs.findIndex((e) => leader.epochs.some((l) => same(l, e)))
  if (commonIndex < 0) return { _tag: "From", position: 0 }
  const common = follower.epochs[commonIndex]!
  // The follower's next epoch after the common one (newest first: the one just before it in the list).
  const followerNext = commonIndex > 0 ? follower.epochs[commonIndex - 1]!.position : follower.writer
  const leaderIndex = leader.epochs.findIndex((l) => same(l, common))
  const leaderNext = leader.epochs[leaderIndex + 1]
  const limit = leaderNext === undefined ? leader.writer : leaderNext.position
  return { _tag: "From", position: Math.min(followerNext, limit) }
}
