/** An event as these formats write it: its type, whether its data is JSON, and its data and metadata text. */
export interface PersistedEvent {
  readonly eventType: string
  readonly isJson: boolean
  readonly data: string
  readonly metadata: string
}
