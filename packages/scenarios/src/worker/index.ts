export { auditCounts, count, eventStatus, installEffectAudit, queueDrained } from './database.ts';
export {
  checkoutEvent,
  queueEnv,
  randomId,
  shopifyEvent,
  startProducer,
  subscriptionEvent,
  TEST_QUEUE,
  type Producer,
  type RawEvent,
} from './events.ts';
export { spawnWorker, type WorkerProcess } from './process.ts';
