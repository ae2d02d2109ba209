/**
 * What a sample body is checked against: its type's payload with every field optional, at every depth, and each
 * string enum member as its text (Paddle's `EventName.TransactionCompleted` is `'transaction.completed'` on the
 * wire). A field a sample gives must exist in the payload type with a value of its type; what the sample leaves
 * out is not checked here (the samples' tests check the top-level fields).
 */
export type Shape<T> = T extends string
  ? `${T}`
  : T extends readonly (infer Item)[]
    ? readonly Shape<Item>[]
    : T extends object
      ? { [K in keyof T]?: Shape<T[K]> }
      : T;

/** Sample bodies of some of a provider's event types, each in its type's shape. */
export type SampleBodies<Payloads, Types extends keyof Payloads> = { [T in Types]: Shape<Payloads[T]> };
