import type { Response } from 'express';
import type { ApiError } from './api-error';

export interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

export function ok<T>(data: T): Envelope<T> {
  return { code: 200, message: 'success', data };
}

/** How an error reaches the client; gateway routes swap in their vendor's shape via res.locals.renderError. */
export type ErrorRenderer = (res: Response, err: ApiError) => void;

export const renderEnvelope: ErrorRenderer = (res, err) => {
  res.status(err.status).set(err.headers).json({ code: err.status, message: err.message, data: null });
};
