import { PageHeader } from '../components';

export function Admin(_props: { params: Record<string, string> }) {
  return <PageHeader title="Accounts" />;
}

export function AdminAccount({ params }: { params: Record<string, string> }) {
  return <PageHeader title={params.accountId} />;
}
