/**
 * Debian's Chromium (`apt-get install chromium`) driven by playwright-core, for the console's browser tests and the
 * scenarios that use the console as an operator does.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { requireTool } from './tools.ts';

export type { Browser, Page } from 'playwright-core';

/** Where the browser is: `CHROMIUM_PATH`, or Debian's. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser tests run: `requireTool` for Chromium (under CI=true a missing browser fails the file). */
export function requireChromium(): boolean {
  return requireTool('chromium', existsSync(CHROMIUM), `none at ${CHROMIUM}: apt-get install chromium`);
}

export function launchChromium(executablePath = CHROMIUM): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
}

/**
 * Signs `login` in to the console at `consoleUrl` in a fresh browser context, through the test identity provider's
 * pages (`@webhook-inbox/testing/oidc`, shown as `providerName` on the console's login page); the page lands on the
 * overview.
 */
export async function signInThroughProvider(
  browser: Browser,
  consoleUrl: string,
  login: string,
  providerName = 'Test IdP',
): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${consoleUrl}/`);
  await page.getByRole('link', { name: `Sign in with ${providerName}` }).click();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: /^Overview/ }).waitFor();
  return page;
}
