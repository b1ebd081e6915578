#!/usr/bin/env node
// The repository's launcher: runs the CLI from src/ through tsx's loader (no build step), for the tests and
// `node bin/toolseal.js` in a checkout. The published package's bin is the built dist/cli/main.js, which needs no tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
