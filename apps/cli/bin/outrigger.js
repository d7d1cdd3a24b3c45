#!/usr/bin/env node
// The workspace's `npx outrigger`: runs the built CLI (npx nx run cli:build first).
import '../dist/main.js';
