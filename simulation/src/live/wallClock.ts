/**
 * The real clock, for the simulator's command line only: a soak run's first seed and the run's elapsed time.
 * Nothing simulated reads it; runs take their time from the simulated clock.
 */
export const wallClockMillis = (): number => Date.now()
