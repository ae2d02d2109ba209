export { createApp, type AppDeps } from './app.ts';
export { createSender } from './boss.ts';
export { ConfigError, describeConfig, parseConfig, type LogLevel, type ReceiverConfig } from './env.ts';
export { mapError, type ErrorBody } from './http-errors.ts';
export { createLogger, flushLogs, type Logger } from './logger.ts';
export { createManagementApp, type ManagementDeps } from './management.ts';
export { createMetrics, type ReceiverMetrics } from './metrics.ts';
export { createRequestPool, startReceiver, type Receiver, type StartOptions } from './receiver.ts';
