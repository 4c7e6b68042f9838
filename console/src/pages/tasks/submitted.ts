/**
 * The input of tasks submitted from this tab, kept in sessionStorage (gone with the tab) so a task's page can show
 * it: the task API's views do not carry the input.
 */
const PREFIX = 'genway.console.input.';

export function rememberInput(taskId: string, input: unknown): void {
  try {
    sessionStorage.setItem(PREFIX + taskId, JSON.stringify(input));
  } catch {
    // storage full or refused: the page then says it has no input to show
  }
}

export function submittedInput(taskId: string): unknown {
  try {
    const raw = sessionStorage.getItem(PREFIX + taskId);
    return raw === null ? undefined : (JSON.parse(raw) as unknown);
  } catch {
    return undefined;
  }
}
