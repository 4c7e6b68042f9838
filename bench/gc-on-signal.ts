/**
 * Preloaded into the server by bench:soak (`--require`, with `--expose-gc`): SIGUSR2 runs a full garbage collection,
 * so "heap after" is what is retained, not garbage not yet collected.
 */
process.on('SIGUSR2', () => (globalThis as { gc?: () => void }).gc?.());
