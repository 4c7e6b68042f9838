#!/usr/bin/env node
import { runCli } from './cli';

void runCli(process.argv.slice(2)).then((code) => {
  if (code !== undefined) process.exitCode = code;
});
