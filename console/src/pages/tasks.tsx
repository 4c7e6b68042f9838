import { PageHeader } from '../components';

export function Tasks(_props: { params: Record<string, string> }) {
  return <PageHeader title="Tasks" />;
}

export function TaskDetail({ params }: { params: Record<string, string> }) {
  return <PageHeader title={`Task ${params.taskId}`} />;
}
