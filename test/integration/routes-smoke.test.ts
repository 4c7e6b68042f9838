import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { MockVendor } from '../helpers/mock-vendor';
import { DEFAULT_AWS_CREDENTIALS, MockBedrock, MOCK_TEXT } from '../helpers/cloud-mocks';
import { fundedKey } from '../helpers/services';

describe('smoke', () => {
  let bedrock: MockBedrock;
  let vendor: MockVendor;
  let gw: RunningGateway;
  let key: string;
  beforeAll(async () => {
    bedrock = await new MockBedrock().start();
    vendor = await new MockVendor().start();
    gw = await startGateway(vendor.url, {
      gateway: {
        upstreams: [{ id: 'bedrock-east', type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url, ...DEFAULT_AWS_CREDENTIALS }],
        routes: [{ model: 'claude-smart', targets: [{ upstream: 'bedrock-east', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }] }],
      },
    });
    ({ key } = await fundedKey(gw.h.services, 10));
  });
  afterAll(async () => {
    await gw.close();
    await bedrock.close();
    await vendor.stop();
  });
  test('json and stream', async () => {
    const client = new Anthropic({ apiKey: key, baseURL: gw.base, maxRetries: 0 });
    const m = await client.messages.create({ model: 'claude-smart', max_tokens: 10, messages: [{ role: 'user', content: 'Hello there' }] });
    console.log(JSON.stringify(m), bedrock.last().path, bedrock.last().verified, bedrock.last().body.toString());
    expect(m.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
    const s = await client.messages.stream({ model: 'claude-smart', max_tokens: 10, messages: [{ role: 'user', content: 'Hello there' }] }).finalMessage();
    console.log(JSON.stringify(s), bedrock.last().path);
    expect(s.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
  });
});
