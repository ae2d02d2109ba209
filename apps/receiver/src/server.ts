import { runReceiver } from '@webhook-inbox/receiver/main';

// The receiver as a deployable process: `pnpm --filter @webhook-inbox/receiver-app start`, the Docker image's
// command, `node apps/receiver/src/server.ts`. Everything it runs is the package's (`npx webhook-inbox receiver`
// runs the same `runReceiver`).
await runReceiver();
