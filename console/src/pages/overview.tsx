import { PageHeader } from '../components';

export function Overview(_props: { params: Record<string, string> }) {
  return <PageHeader title="Overview" />;
}
