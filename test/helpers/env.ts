// Runs in every test worker before the test file.
process.env.LOG_LEVEL ??= 'silent';
