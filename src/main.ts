#!/usr/bin/env node
/**
 * `genway admin` is a client of the admin API over HTTP: it is loaded alone, without the server's modules (stores,
 * queues, vendor tables, the console), which took each terminal command about 0.75 s to start.
 */
import { markStartup } from './observability/startup';

markStartup('main');
const argv = process.argv.slice(2);
const run =
  argv[0] === 'admin'
    ? import('./admin/cli.js').then(({ runAdminCli }) => runAdminCli(argv.slice(1)))
    : import('./cli.js').then(({ runCli }) => runCli(argv));

void run.then((code) => {
  if (code !== undefined) process.exitCode = code;
});
