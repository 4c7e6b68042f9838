import type { Response } from 'express';
import type { ApiError } from './api-error';

export interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

export function ok<T>(data: T, message = 'success'): Envelope<T> {
  return { code: 200, message, data };
}

/** How an error reaches the client (the gateway has its own, in each vendor's shape: src/gateway/vendors.ts). */
export type ErrorRenderer = (res: Response, err: ApiError) => void;

export const renderEnvelope: ErrorRenderer = (res, err) => {
  res.status(err.status).set(err.headers).json({ code: err.status, message: err.message, data: null });
};
