import request from 'supertest';
import type { TestHarness } from './services';

/** Polls `check` every 100 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `tasks` image submits, 3 at a time with 100 ms between each submitter's, while `fault` runs (it starts with the
 * load). Resolves once the fault has completed while submits were still coming in (asserted), with what was
 * acknowledged and the statuses of what was refused.
 */
export async function submitThrough(
  app: TestHarness['app'],
  auth: string,
  tasks: number,
  fault: () => Promise<void>,
): Promise<{ acknowledged: string[]; refused: number[] }> {
  const acknowledged: string[] = [];
  const refused: number[] = [];
  let next = 0;
  const submitter = async () => {
    while (next < tasks) {
      next++;
      const res = await request(app)
        .post('/api/v1/generateTask/image-gen')
        .set('Authorization', auth)
        .send({ input: { mode: 'text-to-image', prompt: 'a lighthouse' } });
      if (res.status === 200) acknowledged.push(res.body.data.taskId as string);
      else refused.push(res.status);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const loadEnded = Promise.all([submitter(), submitter(), submitter()]).then(() => Date.now());
  await fault();
  const faultEndedAt = Date.now();
  expect(faultEndedAt).toBeLessThan(await loadEnded);
  return { acknowledged, refused };
}

/**
 * Every acknowledged task succeeds, more than half of `tasks` were acknowledged, anything refused was a 503, and the
 * ledger holds exactly one charge per acknowledged task and no other.
 */
export async function expectEachRunAndChargedOnce(
  h: TestHarness,
  auth: string,
  accountId: string,
  tasks: number,
  { acknowledged, refused }: { acknowledged: string[]; refused: number[] },
): Promise<void> {
  for (const taskId of acknowledged) {
    await until(
      async () => {
        const res = await request(h.app)
          .get(`/api/v1/statusTask/image-gen?taskId=${taskId}`)
          .set('Authorization', auth);
        return res.body.data?.state === 'success';
      },
      20_000,
      `task ${taskId} to succeed`,
    );
  }
  expect(acknowledged.length).toBeGreaterThan(tasks / 2);
  expect(refused.filter((s) => s !== 503)).toEqual([]);
  const ledger = await h.services.accounts.ledger(accountId);
  const charges = ledger.filter((e) => e.kind === 'charge').map((e) => e.reference);
  expect(charges.sort()).toEqual(acknowledged.map((id) => `task:${id}`).sort());
}
