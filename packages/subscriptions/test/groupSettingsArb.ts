import fc from "fast-check"
import { ConsumerStrategies, defaultGroupSettings, type GroupSettings } from "../src/config/GroupSettings.js"

/**
 * Valid group settings for the model tests: small buffers and read batches (a batch always smaller than the
 * buffer), every strategy, up to 3 retries, and timeouts up to the given scale (the pure machine's tests count
 * a few ms, the service's ticks of 100 ms).
 */
export const groupSettingsArb = (maxMillis: {
  readonly messageTimeout: number
  readonly checkPointAfter: number
}): fc.Arbitrary<GroupSettings> =>
  fc
    .record({
      bufferSize: fc.integer({ min: 2, max: 8 }),
      batch: fc.integer({ min: 1, max: 7 }),
      liveBufferSize: fc.integer({ min: 1, max: 4 }),
      messageTimeoutMilliseconds: fc.integer({ min: 0, max: maxMillis.messageTimeout }),
      maxRetryCount: fc.integer({ min: 0, max: 3 }),
      checkPointAfterMilliseconds: fc.integer({ min: 0, max: maxMillis.checkPointAfter }),
      minCheckPointCount: fc.integer({ min: 0, max: 3 }),
      maxCheckPointCount: fc.integer({ min: 1, max: 6 }),
      namedConsumerStrategy: fc.constantFrom(...ConsumerStrategies),
      maxSubscriberCount: fc.integer({ min: 0, max: 3 })
    })
    .map(({ batch, ...s }) => ({ ...defaultGroupSettings, ...s, readBatchSize: Math.min(batch, s.bufferSize - 1) }))
