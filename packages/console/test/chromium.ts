/**
 * What the console's browser tests share beside `@webhook-inbox/testing/browser` (Chromium, a sign-in through the
 * identity provider): the screenshots' folder and a sign-in with the break-glass token. Not a test file.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN } from './support.ts';

export { launchChromium } from '@webhook-inbox/testing/browser';

/** Where the README's screenshots are written. */
export const SCREENSHOTS = fileURLToPath(new URL('../../../docs/console/', import.meta.url));

/** Signs in on the login page with the admin token, `why` as the reason, and waits for the overview. */
export async function signIn(page: Page, url: string, why: string): Promise<void> {
  await page.goto(`${url}/login`);
  await page.getByLabel('Why').fill(why);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}
