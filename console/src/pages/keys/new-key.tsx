import { useEffect, useRef, useState } from 'preact/hooks';
import { CopyButton, Field } from '../../components';
import { when } from '../../format';

interface Snippet {
  id: string;
  label: string;
  text: (gw: string, key: string) => string;
}

/** How each client is pointed at Genway (README.md, "LLM gateway in one minute"). */
const SNIPPETS: Snippet[] = [
  {
    id: 'openai',
    label: 'OpenAI SDK',
    text: (gw, key) =>
      `export OPENAI_BASE_URL=${gw}/v1\nexport OPENAI_API_KEY=${key}\n\n` +
      `// or in code\nconst openai = new OpenAI({ baseURL: '${gw}/v1', apiKey: process.env.OPENAI_API_KEY });`,
  },
  {
    id: 'anthropic',
    label: 'Anthropic SDK',
    text: (gw, key) =>
      `export ANTHROPIC_BASE_URL=${gw}\nexport ANTHROPIC_API_KEY=${key}\n\n` +
      `// or in code\nconst anthropic = new Anthropic({ baseURL: '${gw}', apiKey: process.env.ANTHROPIC_API_KEY });`,
  },
  {
    id: 'genai',
    label: 'Google GenAI SDK',
    text: (gw, key) =>
      `export GEMINI_API_KEY=${key}\n\n` +
      `const ai = new GoogleGenAI({\n  apiKey: process.env.GEMINI_API_KEY,\n  httpOptions: { baseUrl: '${gw}' },\n});`,
  },
  {
    id: 'ai-sdk',
    label: 'AI SDK',
    text: (gw, key) =>
      `export GENWAY_API_KEY=${key}\n\n` +
      `const openai = createOpenAI({ baseURL: '${gw}/v1', apiKey: process.env.GENWAY_API_KEY });\n` +
      `const anthropic = createAnthropic({ baseURL: '${gw}/v1', apiKey: process.env.GENWAY_API_KEY });\n` +
      `const google = createGoogleGenerativeAI({ baseURL: '${gw}/v1beta', apiKey: process.env.GENWAY_API_KEY });`,
  },
  {
    id: 'claude-code',
    label: 'Claude Code',
    text: (gw, key) => `ANTHROPIC_BASE_URL=${gw} ANTHROPIC_API_KEY=${key} claude`,
  },
  {
    id: 'codex',
    label: 'Codex CLI',
    text: (gw, key) =>
      `# ~/.codex/config.toml\nmodel_provider = "genway"\n\n[model_providers.genway]\nname = "Genway"\n` +
      `base_url = "${gw}/v1"\nenv_key = "GENWAY_KEY"\nwire_api = "responses"\n\n` +
      `# then\nGENWAY_KEY=${key} codex`,
  },
  {
    id: 'gemini-cli',
    label: 'Gemini CLI',
    text: (gw, key) =>
      `# ~/.gemini/settings.json\n{"security":{"auth":{"selectedType":"gemini-api-key"}}}\n\n` +
      `# then\nGOOGLE_GEMINI_BASE_URL=${gw} GEMINI_API_KEY=${key} gemini`,
  },
  {
    id: 'task-api',
    label: 'Task API (curl)',
    text: (gw, key) => `curl -s ${gw}/api/v1/models -H "Authorization: Bearer ${key}"`,
  },
];

/** Where clients reach Genway: the origin this console is served from. */
function gatewayUrl(): string {
  return location.origin;
}

export interface NewKey {
  keyId: string;
  key: string;
  name?: string;
  /** Rotation: the key it replaces and until when that one still works. */
  rotatedFrom?: string | null;
  oldKeyExpiresAt?: string | number | null;
}

/**
 * A key just created or rotated, shown this once: the secret with a copy button, and how to set it in each client.
 * It takes focus so a screen reader announces it.
 */
export function NewKeyPanel({ created, onDone }: { created: NewKey; onDone(): void }) {
  const [client, setClient] = useState(SNIPPETS[0].id);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), [created.key]);
  const snippet = SNIPPETS.find((s) => s.id === client) ?? SNIPPETS[0];
  const text = snippet.text(gatewayUrl(), created.key);
  return (
    <section class="card new-key" aria-labelledby="new-key-title" tabIndex={-1} ref={ref}>
      <h2 id="new-key-title">
        {created.rotatedFrom ? 'Rotated: the new key' : 'Your new key'}
        {created.name ? ` “${created.name}”` : ''}
      </h2>
      <p class="notice notice-warn">
        <strong>Copy it now: you will not see it again.</strong> Genway keeps only a hash of it.
      </p>
      <div class="secret-box">
        <code>{created.key}</code>
        <CopyButton text={created.key} label="Copy key" />
      </div>
      <p class="hint">
        Key ID <span class="mono">{created.keyId}</span>
        {created.rotatedFrom ? (
          <>
            {' '}
            replaces <span class="mono">{created.rotatedFrom}</span>, which keeps working until{' '}
            {when(created.oldKeyExpiresAt)}.
          </>
        ) : null}
      </p>
      <h3>Use it</h3>
      <div class="filters">
        <Field id="snippet-client" label="Client">
          <select id="snippet-client" value={client} onChange={(e) => setClient(e.currentTarget.value)}>
            {SNIPPETS.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
        </Field>
        <CopyButton text={text} label="Copy snippet" />
      </div>
      <pre>
        <code>{text}</code>
      </pre>
      <div class="form-actions">
        <button type="button" class="button secondary" onClick={onDone}>
          I have saved the key
        </button>
      </div>
    </section>
  );
}
