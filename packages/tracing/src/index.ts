export { startTracing, type StartTracingOptions, type Tracing } from './sdk.ts';
