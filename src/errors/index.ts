export * from './api-error';
export * from './envelope';
