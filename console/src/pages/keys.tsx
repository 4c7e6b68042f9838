import { PageHeader } from '../components';

export function Keys(_props: { params: Record<string, string> }) {
  return <PageHeader title="Keys" />;
}
