export { createApp, type AppDeps } from './ingress/app.ts';
export { createSender } from './boss.ts';
export {
  ConfigError,
  describeConfig,
  parseConfig,
  type LogLevel,
  type ReceiverConfig,
} from './config/env.ts';
export { mapError, type ErrorBody } from './http/errors.ts';
export { createLogger, flushLogs, type Logger } from './logger.ts';
export { createManagementApp, type ManagementDeps } from './management/app.ts';
export { createMetrics, type ReceiverMetrics } from './management/metrics.ts';
export { createRequestPool, startReceiver, type Receiver, type StartOptions } from './receiver.ts';
