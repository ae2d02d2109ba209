export { createApp, type AppDeps } from './app.ts';
export { createExampleInbox, type ExampleEffectsOptions } from './effects/index.ts';
export { ConfigError, describeConfig, parseConfig, type WorkerConfig } from './env.ts';
export { createLogger, type Logger } from './logger.ts';
export { createMailer, type MailMessage, type Mailer, type MailerOptions } from './mail.ts';
export { createMetrics, type WorkerMetrics } from './metrics.ts';
export { startWorker, type StartWorkerOptions, type Worker } from './worker.ts';
