import { PageHeader } from '../components';

export function Batches(_props: { params: Record<string, string> }) {
  return <PageHeader title="Batches" />;
}

export function BatchDetail({ params }: { params: Record<string, string> }) {
  return <PageHeader title={`Batch ${params.batchId}`} />;
}
