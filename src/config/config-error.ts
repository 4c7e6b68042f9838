/** A config that cannot run: its message is the one line the process prints before it stops. */
export class ConfigError extends Error {}
