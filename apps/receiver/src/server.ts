import { runReceiver } from './main.ts';

// The receiver on its own: `pnpm --filter @webhook-inbox/receiver start` (or `node apps/receiver/src/server.ts`).
await runReceiver();
