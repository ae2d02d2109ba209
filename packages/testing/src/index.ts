export { createTestDatabase, useTestDatabase, type TestDatabase } from './database.ts';
export { appRoleUrl, databaseUrl, TEST_APP_ROLE } from './database-url.ts';
export { TcpProxy } from './tcp-proxy.ts';
export { waitFor, type WaitOptions } from './wait.ts';
export { getWithHost } from './host-request.ts';
export { metricValue } from './prometheus-text.ts';
export { startOtlpCollector, type CollectedSpan, type OtlpCollector } from './otlp-collector.ts';
export { insertEvents } from './events.ts';
export { onPath, requireTool } from './tools.ts';
export { startTestBoss, type TestBossOptions } from './boss.ts';
export { removeTempFiles, useTempFiles, type TempFiles } from './temp-files.ts';
export { useCertificateServer, type CertificateServer } from './certificate-server.ts';
export { useStarted, type Started } from './started.ts';
export { cpuTime } from './cpu-time.ts';
export { fixture, fixtureText } from './fixtures.ts';
export { startAlertSink, type AlertSink } from './alert-sink.ts';
export { insertThreeTeams, TEAM_ERRORS, TEAM_FAILURES, type Team } from './teams.ts';
export {
  sampleCredentials,
  selfSignedCertificate,
  type CredentialsFor,
  type SampleCredentials,
} from './sample-credentials.ts';
export {
  startWebhookSink,
  type Responder,
  type Sink,
  type SinkAnswer,
  type SinkRequest,
} from './webhook-sink.ts';
