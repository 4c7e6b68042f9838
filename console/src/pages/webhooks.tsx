import { PageHeader } from '../components';

export function Webhooks(_props: { params: Record<string, string> }) {
  return <PageHeader title="Webhooks" />;
}
