export { loadConfig, ConfigError, deepMerge, type LoadOptions } from './load';
export { type Config, type RateLimit, rateLimitSchema } from './schema';
