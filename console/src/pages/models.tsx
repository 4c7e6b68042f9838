import { PageHeader } from '../components';

export function Models(_props: { params: Record<string, string> }) {
  return <PageHeader title="Models" />;
}

export function ModelDetail({ params }: { params: Record<string, string> }) {
  return <PageHeader title={params.modelId} />;
}
