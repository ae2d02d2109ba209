export { createTestDatabase, useTestDatabase, type TestDatabase } from './database.ts';
export { databaseUrl } from './database-url.ts';
export { TcpProxy } from './tcp-proxy.ts';
export { waitFor, type WaitOptions } from './wait.ts';
export { metricValue } from './prometheus-text.ts';
export { startOtlpCollector, type CollectedSpan, type OtlpCollector } from './otlp-collector.ts';
export { insertEvents } from './events.ts';
export { onPath, requireTool } from './tools.ts';
export { startTestBoss, type TestBossOptions } from './boss.ts';
