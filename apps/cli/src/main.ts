#!/usr/bin/env node
import { run } from './outrigger.js';

process.exitCode = await run(process.argv.slice(2));
