import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const CHART = path.join(__dirname, '..', '..', 'helm', 'genway');
const templates = fs.readdirSync(path.join(CHART, 'templates')).map((f) => path.join(CHART, 'templates', f));
const values = YAML.parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')) as Record<
  string,
  unknown
>;

function has(root: Record<string, unknown>, dotted: string): boolean {
  let node: unknown = root;
  for (const part of dotted.split('.')) {
    if (!node || typeof node !== 'object' || !(part in (node as object))) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return true;
}

test('Chart.yaml and values.yaml parse', () => {
  const chart = YAML.parse(fs.readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8'));
  expect(chart).toMatchObject({ apiVersion: 'v2', name: 'genway' });
  expect(values).toMatchObject({ api: { replicas: 2 }, worker: { replicas: 1 }, redis: { url: '' } });
});

test('every .Values path the templates use exists in values.yaml', () => {
  const used = new Set<string>();
  for (const file of templates) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/\.Values\.([A-Za-z0-9_.]+)/g))
      used.add(m[1].replace(/\.$/, ''));
  }
  expect(used.size).toBeGreaterThan(20);
  const missing = [...used].filter((p) => !has(values, p));
  expect(missing).toEqual([]);
});

test('the templates cover the deployment the issue names', () => {
  const text = (name: string) => fs.readFileSync(path.join(CHART, 'templates', name), 'utf8');
  expect(text('deployment-api.yaml')).toContain('args: ["serve", "--no-worker"]');
  expect(text('deployment-worker.yaml')).toContain('args: ["worker"]');
  for (const f of ['deployment-api.yaml', 'deployment-worker.yaml']) {
    expect(text(f)).toContain('path: /readyz');
    expect(text(f)).toContain('path: /healthz');
    expect(text(f)).toContain('checksum/config:');
    expect(text(f)).toContain('runAsNonRoot: true');
  }
  for (const f of [
    'service.yaml',
    'configmap.yaml',
    'secret.yaml',
    'hpa.yaml',
    'pdb-api.yaml',
    'pdb-worker.yaml',
    'servicemonitor.yaml',
    'ingress.yaml',
  ]) {
    expect(fs.existsSync(path.join(CHART, 'templates', f))).toBe(true);
  }
  expect(text('secret.yaml')).toContain('{{- if not .Values.existingSecret }}');
  expect(text('NOTES.txt')).toMatch(/WARNING: no Redis URL[\s\S]*more than one replica/);
});
