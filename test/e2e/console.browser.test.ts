import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { MockVendor } from '../helpers/mock-vendor';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { startReceiver } from '../helpers/receiver';
import { ADMIN_TOKEN, fundedKey } from '../helpers/services';
import { dropPrefix, storeModes, uniquePrefix } from '../helpers/redis';
import { eventually } from '../helpers/eventually';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres';
import {
  axeViolations,
  describeBrowser,
  horizontalOverflow,
  launchChromium,
  seriousOnes,
  signIn,
  VIEWPORTS,
  watchProblems,
} from '../helpers/browser';

/**
 * The built console (dist/console, `npm run build`) in the system Chromium, against a real Genway on loopback in
 * both store modes: what a person does on each page, then every page at a desktop and a phone size through axe,
 * with the page's CSP in force. `GENWAY_CONSOLE_SCREENSHOTS=<dir>` also saves each page at both sizes
 * (`npm run console:screenshots` writes docs/console/).
 */

/** One messages call (12 in, 3 out) costs 18,000 micro-USD. */
const PRICES = { 'claude-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 } };
const SCREENSHOTS = process.env.GENWAY_CONSOLE_SCREENSHOTS;

// Response bodies are read field by field in assertions: any keeps them terse, expect() checks the values.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describeBrowser.each(storeModes)('the console in Chromium (%s)', (mode, redis) => {
  let vendor: MockVendor;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let gw: RunningGateway;
  let browser: Browser;
  let prefix: string;
  let owner: { accountId: string; key: string; keyId: string };
  // Request logs: the process's ring embedded, PostgreSQL in Redis mode.
  let db: TestDatabase | undefined;
  const problems: string[] = [];

  beforeAll(async () => {
    vendor = await new MockVendor().start();
    receiver = await startReceiver();
    prefix = uniquePrefix('console-ui');
    db = redis && postgresAvailable ? await createTestDatabase('console') : undefined;
    gw = await startGateway(vendor.url, {
      redis,
      prefix,
      workers: true,
      gateway: { prices: PRICES },
      overlay: {
        sandbox: { delayMs: 300 },
        security: { allowPrivateTargets: true },
        logs: { flushMs: 50, ...(db ? { databaseUrl: db.url } : {}) },
      },
    });
    owner = await fundedKey(gw.h.services, 50);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await receiver?.close();
    await vendor?.stop();
    if (redis) await dropPrefix(prefix);
    await db?.drop();
  });
  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  const api = async (secret: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': `k-${path}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };

  const newPage = async (viewport: { width: number; height: number } = VIEWPORTS.desktop): Promise<Page> => {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const seen = watchProblems(page);
    page.on('close', () => problems.push(...seen));
    return page;
  };

  test('an account owner signs in, creates a key and revokes it', async () => {
    const page = await newPage();
    await signIn(page, gw.base, owner.key);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('ci-browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('you will not see it again', { exact: false }).waitFor();
    const shown = await page
      .getByText(/^gwk_[A-Za-z0-9_-]{40,}$/)
      .first()
      .textContent();
    const created = await api(shown!, 'GET', '/api/v1/account');
    expect(created.status).toBe(200);
    expect(created.json.data.accountId).toBe(owner.accountId);
    await page.getByRole('button', { name: 'I have saved the key' }).click();
    await page.getByText(shown!).first().waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Revoke ci-browser' }).click();
    await page.getByRole('dialog', { name: 'Revoke key ci-browser?' }).waitFor();
    await page.getByRole('button', { name: 'Revoke now' }).click();
    await eventually(async () => expect((await api(shown!, 'GET', '/api/v1/account')).status).toBe(401));
    const row = page.getByRole('row').filter({ hasText: 'ci-browser' });
    await row.getByText('revoked', { exact: true }).waitFor();
    await page.close();
  });

  test("a model's form submits a sandbox task; its result appears; the charge is the price", async () => {
    const page = await newPage();
    await signIn(page, gw.base, owner.key);
    const before = (await api(owner.key, 'GET', '/api/v1/account')).json.data.balanceUsd as number;
    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('link', { name: 'Image (common inputs)' }).first().click();
    await page.waitForURL(/\/console\/models\//);
    await page.getByLabel('prompt', { exact: true }).fill('a red bicycle');
    await page.getByRole('button', { name: 'Submit sandbox task' }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_|\/console\/tasks\/[^/]+$/);
    const taskId = decodeURIComponent(page.url().split('/').pop()!);
    const image = page.getByRole('img', { name: 'Result image 1' });
    await image.waitFor({ timeout: 20_000 });
    await eventually(async () =>
      expect(
        await image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      ).toBeGreaterThan(0),
    );
    const task = (await api(owner.key, 'GET', `/api/v1/tasks/${taskId}`)).json.data;
    expect(task).toMatchObject({ state: 'success', model: 'basic-image', chargeUsd: 0.03, refundUsd: 0 });
    expect(task.input.prompt).toBe('a red bicycle');
    const after = (await api(owner.key, 'GET', '/api/v1/account')).json.data.balanceUsd as number;
    expect(Math.round((before - after) * 1e6)).toBe(30_000);
    await page.close();
  });

  test('the webhook secret rotates from its page', async () => {
    const version = (await api(owner.key, 'GET', '/api/v1/webhooks/secret')).json.data.version as number;
    const page = await newPage();
    await signIn(page, gw.base, owner.key);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).waitFor();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByText(`New secret, version ${version + 1}.`).waitFor();
    expect((await api(owner.key, 'GET', '/api/v1/webhooks/secret')).json.data.version).toBe(version + 1);
    await page.close();
  });

  test('spend appears on the chart: gateway and task spend by model, to the cent', async () => {
    const { key } = await fundedKey(gw.h.services, 5);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
      });
      expect(res.status).toBe(200);
    }
    const submitted = await api(key, 'POST', '/api/v1/generateTask/basic-image', {
      input: { prompt: 'a kite' },
    });
    expect(submitted.status).toBe(200);
    const page = await newPage();
    await signIn(page, gw.base, key);
    const chart = page.getByRole('img', { name: /^Spend per day by model/ });
    await chart.waitFor();
    const label = await chart.getAttribute('aria-label');
    expect(label).toContain('$0.066 in all');
    expect(label).toContain('claude-test $0.036');
    expect(label).toContain('basic-image $0.03');
    await page.getByText('Show the numbers as a table').click();
    const table = page.getByRole('table', { name: /Spend per day by model/ });
    expect(await table.getByRole('columnheader', { name: 'claude-test' }).count()).toBe(1);
    await page.close();
  });

  test('the admin sees every account, adds credits and drills into one', async () => {
    const { accountId } = await gw.h.services.accounts.createAccount(`Acme ${mode}`, 10);
    const page = await newPage();
    await signIn(page, gw.base, ADMIN_TOKEN);
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('link', { name: `Acme ${mode}`, exact: true }).click();
    await page.waitForURL(`${gw.base}/console/admin/accounts/${accountId}`);
    await page.getByLabel('Amount (USD)', { exact: true }).fill('5');
    await page.getByLabel('Reference (optional)', { exact: true }).fill('invoice-7');
    await page.getByRole('button', { name: 'Add credits' }).click();
    await page.getByText('Added $5.00. The balance is now $15.00.').waitFor();
    expect(await gw.h.services.accounts.balanceUsd(accountId)).toBe(15);
    await page.getByRole('button', { name: 'Open keys' }).click();
    await page.waitForURL(`${gw.base}/console/keys`);
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    await page.close();
  });

  test('the task list: filters go into the URL, cursor paging moves forward and back', async () => {
    const { key } = await fundedKey(gw.h.services, 5);
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      const res = await api(key, 'POST', '/api/v1/generateTask/basic-image', {
        input: { prompt: `tile ${i}` },
      });
      ids.push(res.json.data.taskId as string);
    }
    await eventually(async () => {
      const listed = await api(key, 'GET', '/api/v1/tasks?state=success&limit=100');
      expect(listed.json.data.items).toHaveLength(22);
    }, 20_000);
    const page = await newPage();
    await signIn(page, gw.base, key);
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.getByLabel('State', { exact: true }).selectOption('success');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]state=success/);
    const table = page.getByRole('region', { name: 'Tasks' });
    const idsShown = async () =>
      (await table.getByRole('link').allTextContents()).filter((t) => t.startsWith('task_'));
    await eventually(async () => expect(await idsShown()).toHaveLength(20));
    const first = await idsShown();
    expect(first).toEqual([...ids].reverse().slice(0, 20)); // newest first
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2').waitFor();
    await eventually(async () => expect(await idsShown()).toEqual([ids[1], ids[0]]));
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('Page 1').waitFor();
    await eventually(async () => expect(await idsShown()).toEqual(first));
    await page.reload();
    await page.getByText('Page 1').waitFor();
    expect(await page.getByLabel('State', { exact: true }).inputValue()).toBe('success');
    await page.close();
  });

  test("the request log: a call's row and its detail, a task's link to its row, the admin's audit trail", async () => {
    const { key, keyId, accountId } = await fundedKey(gw.h.services, 5);
    const res = await fetch(`${gw.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('genway-request-id')!;
    const task = await api(key, 'POST', '/api/v1/generateTask/basic-image', { input: { prompt: 'a lamp' } });
    const taskId = task.json.data.taskId as string;
    const page = await newPage();
    await signIn(page, gw.base, key);
    await page.getByRole('link', { name: 'Logs' }).click();
    const table = page.getByRole('region', { name: 'Request log' });
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      expect(await table.getByRole('row').count()).toBe(3); // the heading and two calls
    });
    // Filter to the gateway call, open it: its numbers as the API has them.
    await page.getByLabel('Surface', { exact: true }).selectOption('gateway');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]surface=gateway/);
    await eventually(async () => expect(await table.getByRole('row').count()).toBe(2));
    const row = table.getByRole('row').nth(1);
    expect(await row.textContent()).toContain('claude-test');
    expect(await row.textContent()).toContain('12 / 3');
    expect(await row.textContent()).toContain('$0.018');
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Call', level: 1 }).waitFor();
    await page.getByText(requestId).waitFor();
    expect(await page.getByRole('main').textContent()).toContain(keyId);
    // A task's page links to its row.
    await page.goto(`${gw.base}/console/tasks/${taskId}`);
    await page.getByRole('link', { name: 'Request log' }).click();
    await page.waitForURL(new RegExp(`taskId=${taskId}`));
    await eventually(async () => expect(await table.getByRole('row').count()).toBe(2));
    expect(await table.getByRole('row').nth(1).textContent()).toContain('$0.03');
    await page.close();

    // The admin's audit trail shows the credit it adds here, filtered to this account.
    const admin = await newPage();
    await signIn(admin, gw.base, ADMIN_TOKEN);
    expect(
      (await api(ADMIN_TOKEN, 'POST', `/admin/v1/accounts/${accountId}/credits`, { amountUsd: 1 })).status,
    ).toBe(200);
    await admin.getByRole('link', { name: 'Audit' }).click();
    await admin.getByLabel('Account id', { exact: true }).fill(accountId);
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    const trail = admin.getByRole('region', { name: 'Audit trail' });
    await eventually(async () => {
      await admin.getByRole('button', { name: 'Refresh' }).click();
      const text = await trail.textContent();
      expect(text).toContain('credit.add');
      expect(text).toContain('amountUsd: 1');
    });
    await admin.close();
  });

  test('every page at 1280x800 and 390x844: no serious axe violation, no sideways scroll', async () => {
    // Something on every page: gateway calls, a finished task, a batch, a delivery.
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': owner.key,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
      });
      expect(res.status).toBe(200);
    }
    const task = await api(owner.key, 'POST', '/api/v1/generateTask/basic-image', {
      input: { prompt: 'a harbour at dawn' },
      request_type: 'callback',
      callback_url: receiver.url,
    });
    const batch = await api(owner.key, 'POST', '/api/v1/generateTask/basic-image/batches', {
      items: [
        { client_item_id: 'one', idempotency_key: 'one', input: { prompt: 'a boat' } },
        { client_item_id: 'two', idempotency_key: 'two', input: { prompt: '' } },
      ],
    });
    expect(batch.status).toBe(200);
    const taskId = task.json.data.taskId as string;
    await eventually(async () => expect(receiver.received.length).toBeGreaterThan(0), 20_000);
    const { accountId } = owner;
    // Changes through the admin API, for the audit trail's page.
    const admin = (method: string, path: string, body: unknown) =>
      api(ADMIN_TOKEN, method, `/admin/v1${path}`, body);
    expect(
      (await admin('POST', `/accounts/${accountId}/credits`, { amountUsd: 5, reference: 'inv-9' })).status,
    ).toBe(200);
    expect(
      (await admin('PUT', `/accounts/${accountId}/budget`, { period: 'month', limitUsd: 40 })).status,
    ).toBe(200);
    expect(
      (await admin('POST', `/accounts/${accountId}/keys`, { name: 'deploy', models: ['claude-test'] }))
        .status,
    ).toBe(200);
    await gw.h.services.logs.flush();
    const logged = await api(owner.key, 'GET', '/api/v1/logs?limit=1');
    const logId = logged.json.data.items[0].logId as string;
    const pages: [string, string, string][] = [
      [owner.key, '/', 'overview'],
      [owner.key, '/keys', 'keys'],
      [owner.key, '/tasks', 'tasks'],
      [owner.key, `/tasks/${taskId}`, 'task'],
      [owner.key, '/batches', 'batches'],
      [owner.key, `/batches/${batch.json.data.batchId}?model=basic-image`, 'batch'],
      [owner.key, '/webhooks', 'webhooks'],
      [owner.key, '/models', 'models'],
      [owner.key, '/models/basic-image', 'model'],
      [owner.key, '/logs', 'logs'],
      [owner.key, `/logs/${encodeURIComponent(logId)}`, 'log'],
      [ADMIN_TOKEN, '/admin', 'admin'],
      [ADMIN_TOKEN, `/admin/accounts/${accountId}`, 'admin-account'],
      [ADMIN_TOKEN, '/audit', 'audit'],
    ];
    const failures: string[] = [];
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const page = await newPage(viewport);
      await page.goto(`${gw.base}/console/signin`);
      await settle(page);
      failures.push(...(await check(page, 'signin', name)));
      let signedInWith = '';
      for (const [secret, at, slug] of pages) {
        if (secret !== signedInWith) {
          await page.evaluate('sessionStorage.clear()');
          await signIn(page, gw.base, secret);
          signedInWith = secret;
        }
        await page.goto(`${gw.base}/console${at}`);
        await settle(page);
        failures.push(...(await check(page, slug, name)));
      }
      await page.close();
    }
    expect(failures).toEqual([]);
  }, 120_000);

  /** Waits until the page has its heading and no "Loading…" is left. */
  async function settle(page: Page): Promise<void> {
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    // A locator, not waitForFunction: a string predicate is eval'd in the page, which its CSP rightly refuses.
    await page
      .locator('[role=status]', { hasText: 'Loading' })
      .first()
      .waitFor({ state: 'detached', timeout: 15_000 });
    await page.waitForLoadState('networkidle').catch(() => undefined);
  }

  async function check(page: Page, slug: string, size: string): Promise<string[]> {
    const found = seriousOnes(await axeViolations(page)).map((v) => `${slug} ${size}: ${v}`);
    const overflow = await horizontalOverflow(page);
    if (overflow > 0) found.push(`${slug} ${size}: the page scrolls sideways by ${overflow} px`);
    if (SCREENSHOTS && mode === 'embedded') {
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${slug}-${size}.png`), fullPage: true });
    }
    return found;
  }
});
