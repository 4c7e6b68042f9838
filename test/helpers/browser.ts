import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The system Chromium global setup found (Debian's package), or undefined: then browser suites skip. */
export const chromiumPath = process.env.GENWAY_TEST_CHROMIUM;

export const describeBrowser: jest.Describe = chromiumPath ? describe : describe.skip;

/**
 * Headless Chromium as the machine's own package runs it: no sandbox (root in CI), no GPU, and none of the
 * background traffic (updates, sync, field trials) a closed network would refuse.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath!,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * What a page must never do: throw, fail a request for its own code, or trip its Content Security Policy. Each
 * problem is kept with the page's URL; a test asserts the list is empty at its end.
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`${page.url()}: page error: ${err.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(text))
      problems.push(`${page.url()}: CSP: ${text}`);
  });
  page.on('response', (response) => {
    if (response.url().includes('/console/assets/') && response.status() >= 400)
      problems.push(`${page.url()}: ${response.status()} for ${response.url()}`);
  });
  return problems;
}

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * axe-core's WCAG 2.1 AA rules on the page as it stands. axe is evaluated through the DevTools protocol, which
 * the page's CSP does not govern, so the console is checked under its real policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, not a function: this runs in the page, whose globals (document, axe) the tests' types do not know.
  return page.evaluate<AxeViolation[]>(
    `axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    }).then((result) => result.violations)`,
  );
}

/** Serious and critical violations, one line each, for an assertion that prints what is wrong. */
export function seriousOnes(violations: AxeViolation[]): string[] {
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The page is no wider than the viewport (a phone never scrolls sideways; wide tables scroll in their box). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
}

/** Signs in through the form, as a person does, and waits for the overview. */
export async function signIn(page: Page, base: string, secret: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API key or admin token').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/console/`);
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}
