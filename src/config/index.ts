export { loadConfig, ConfigError, deepMerge, type LoadOptions } from './load';
export { type Config, type Price, type RateLimit, type TokenPrices, rateLimitSchema } from './schema';
