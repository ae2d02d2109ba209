/** The destinations' tests' endpoint: `@webhook-inbox/testing`'s, which the CLI's `listen` tests share. */
export {
  startSink,
  type Responder,
  type Sink,
  type SinkAnswer,
  type SinkRequest,
} from '@webhook-inbox/testing';
