import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { bindUpstreams } from '../../src/gateway/upstream';

/** The one line a bad `gateway` config stops start-up with. */
function refusal(gateway: Record<string, unknown>): string {
  try {
    const config = loadConfig({ env: {}, overlay: { gateway } });
    bindUpstreams(config.gateway).close();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the config was accepted');
}

const bedrock = {
  id: 'aws',
  type: 'bedrock',
  region: 'us-east-1',
  accessKeyId: 'AKIAEXAMPLE',
  secretAccessKey: 'secret',
};
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const serviceAccount = {
  type: 'service_account',
  client_email: 'genway@project.iam.gserviceaccount.com',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
};

describe('gateway.upstreams and gateway.routes: a bad config stops start-up with one line naming the key', () => {
  test.each<[string, Record<string, unknown>, string]>([
    [
      'an unknown upstream in a route',
      { routes: [{ model: 'm', targets: [{ upstream: 'nowhere' }] }] },
      'config: gateway.routes.0.targets.0.upstream: no upstream "nowhere" (gateway.upstreams ids and anthropic, openai, gemini)',
    ],
    [
      'a route naming a route that is not there',
      { routes: [{ model: 'm', targets: [{ route: 'n' }] }] },
      'config: gateway.routes.0.targets.0.route: no route "n"',
    ],
    [
      'routes naming each other in a cycle',
      {
        routes: [
          { model: 'a', targets: [{ route: 'b' }] },
          { model: 'b', targets: [{ route: 'c' }] },
          { model: 'c', targets: [{ route: 'a' }] },
        ],
      },
      'config: gateway.routes.0.targets: routes name each other in a cycle: a -> b -> c -> a',
    ],
    [
      'a Bedrock upstream without its secret',
      { upstreams: [{ ...bedrock, secretAccessKey: undefined }] },
      'config: gateway.upstreams.0.secretAccessKey: required: a Bedrock credential (accessKeyId and secretAccessKey, or apiKey)',
    ],
    [
      'a Bedrock upstream with two credentials',
      { upstreams: [{ ...bedrock, apiKey: 'k' }] },
      'config: gateway.upstreams.0.apiKey: set apiKey or accessKeyId + secretAccessKey, not both',
    ],
    [
      'a Vertex upstream without credentials',
      { upstreams: [{ id: 'gcp', type: 'vertex', projectId: 'my-project', region: 'us-east5' }] },
      'config: gateway.upstreams.0.credentials: required: credentials (a service-account key) or credentialsFile (its path), one of the two',
    ],
    [
      'an Azure upstream without a key',
      { upstreams: [{ id: 'az', type: 'azure-openai', baseUrl: 'https://r.openai.azure.com', apiKeys: [] }] },
      'config: gateway.upstreams.0.apiKeys: at least one key (sent as api-key)',
    ],
    [
      'an upstream named as a built-in one',
      { upstreams: [{ ...bedrock, id: 'openai' }] },
      'config: gateway.upstreams.0.id: "openai" is the built-in upstream of gateway.openai',
    ],
    [
      'two routes of one name',
      {
        routes: [
          { model: 'm', targets: [{ upstream: 'openai' }] },
          { model: 'm', targets: [{ upstream: 'anthropic' }] },
        ],
      },
      'config: gateway.routes.1.model: "m" has another route too',
    ],
  ])('%s', (_name, gateway, line) => {
    expect(refusal(gateway).split(' (got ')[0]).toBe(line);
  });

  test('an unreadable credentialsFile, and one that is no service-account key', () => {
    const missing = path.join(os.tmpdir(), `genway-no-such-key-${process.pid}.json`);
    expect(
      refusal({
        upstreams: [
          {
            id: 'gcp',
            type: 'vertex',
            projectId: 'my-project',
            region: 'us-east5',
            credentialsFile: missing,
          },
        ],
      }),
    ).toBe(`config: gateway.upstreams.0.credentialsFile: cannot read ${missing} (ENOENT)`);
    const wrong = path.join(os.tmpdir(), `genway-wrong-key-${process.pid}.json`);
    fs.writeFileSync(wrong, JSON.stringify({ type: 'authorized_user' }));
    try {
      expect(
        refusal({
          upstreams: [
            {
              id: 'gcp',
              type: 'vertex',
              projectId: 'my-project',
              region: 'us-east5',
              credentialsFile: wrong,
            },
          ],
        }),
      ).toMatch(/^config: gateway\.upstreams\.0\.credentialsFile: type: /);
    } finally {
      fs.rmSync(wrong);
    }
  });

  test('a good config binds every upstream, the built-in ones first, and never puts a secret in an error or a key id', () => {
    const config = loadConfig({
      env: {},
      overlay: {
        gateway: {
          upstreams: [
            bedrock,
            {
              id: 'gcp',
              type: 'vertex',
              projectId: 'my-project',
              region: 'us-east5',
              credentials: serviceAccount,
            },
          ],
          routes: [
            {
              model: 'claude',
              strategy: 'weighted',
              targets: [{ upstream: 'aws', model: 'anthropic.x', weight: 2 }, { upstream: 'gcp' }],
            },
          ],
        },
      },
    });
    const bound = bindUpstreams(config.gateway);
    try {
      expect([...bound.byId.keys()]).toEqual(['anthropic', 'gemini', 'openai', 'aws', 'gcp']);
      expect(bound.byId.get('aws')!.origin.href).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/');
      expect(bound.byId.get('gcp')!.origin.href).toBe('https://us-east5-aiplatform.googleapis.com/');
      expect(bound.firstOf('vertex')?.name).toBe('gcp');
      const ids = [...bound.byId.values()].flatMap((u) => u.pool.members.map((m) => m.id));
      expect(ids.join(' ')).not.toMatch(/secret|PRIVATE KEY/);
    } finally {
      bound.close();
    }
  });
});

test('a refused upstream entry never echoes its credentials', () => {
  const both = refusal({
    upstreams: [
      {
        id: 'gcp',
        type: 'vertex',
        projectId: 'my-project',
        region: 'us-east5',
        credentials: serviceAccount,
        credentialsFile: '/x',
      },
    ],
  });
  expect(both).toMatch(/^config: gateway\.upstreams\.0\.credentials: .* \(got object, not shown\)$/);
  const typo = refusal({ upstreams: [{ ...bedrock, type: 'bedrok' }] });
  expect(typo).not.toContain('secret');
  expect(typo).toMatch(/^config: gateway\.upstreams\.0/);
});
