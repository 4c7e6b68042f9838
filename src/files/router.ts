import express, { type Router } from 'express';
import type { Clock } from '../clock';
import { ApiError } from '../errors';
import { defineRoute } from '../http/routes';
import { placeholders, type PlaceholderKind } from '../providers/sandbox';
import type { TaskStore } from '../tasks/store';
import type { FileSigner } from './signer';

const NAME = /^0\.(png|jpg|mp4|mp3)$/;

/** Result media of sandbox tasks, behind signed URLs that answer 410 once expired (no API key: the URL is the key). */
export function filesRouter({
  signer,
  tasks,
  clock,
}: {
  signer: FileSigner;
  tasks: TaskStore;
  clock: Clock;
}): Router {
  const router = express.Router();
  defineRoute(router, '/files/:taskId/:name', {
    get: async (req, res) => {
      const { taskId, name } = req.params as { taskId: string; name: string };
      const expiresAt = Number(req.query.exp);
      const sig = typeof req.query.sig === 'string' ? req.query.sig : '';
      const match = NAME.exec(name);
      if (!match || !Number.isSafeInteger(expiresAt) || !signer.verify(taskId, name, expiresAt, sig)) {
        throw new ApiError('forbidden', 'Invalid or tampered result URL');
      }
      if (clock.now() >= expiresAt)
        throw new ApiError('gone', 'This result URL has expired (24 h after completion)');
      const task = await tasks.get(taskId);
      if (!task || task.state !== 'success') throw new ApiError('not_found', 'No such result');
      const file = placeholders[match[1] as PlaceholderKind];
      res.set('Cache-Control', 'private, max-age=3600').type(file.contentType).send(file.bytes);
    },
  });
  return router;
}
